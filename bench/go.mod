module github.com/kolco-dev/kolco/bench

go 1.26.0

require (
	github.com/bradfitz/gomemcache v0.0.0-20260422231931-4d751bb6e37c
	github.com/buraksezer/consistent v1.1.0
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/dgryski/go-jump v0.0.0-20170409065014-e1f439676b57
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f
	github.com/golang/groupcache v0.0.0-20241129210726-2c02b8208cf8
	github.com/kolco-dev/kolco v0.0.0-00010101000000-000000000000
	github.com/serialx/hashring v0.0.0-20200727003509-22c0c7ab6b1b
	github.com/stathat/consistent v1.0.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/twmb/murmur3 v1.2.2 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/kolco-dev/kolco => ../
