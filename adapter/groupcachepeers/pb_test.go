package groupcachepeers_test

import pb "github.com/golang/groupcache/groupcachepb"

type (
	pbRequest  = pb.GetRequest
	pbResponse = pb.GetResponse
)
