package rediscluster_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/compat/rediscluster"
)

// Find the master that serves a key, from CLUSTER NODES output. Keys with a
// hash tag share a slot and so a master. The slot of "123456789" is
// 0x31C3 = 12739, CRC16/XMODEM's check value.
func Example() {
	masters, err := rediscluster.ParseClusterNodes(`
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 10.0.0.1:6379@16379 myself,master - 0 0 1 connected 0-5460
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 10.0.0.2:6379@16379 master - 0 1426238316232 2 connected 5461-10922
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 10.0.0.3:6379@16379 master - 0 1426238318243 3 connected 10923-16383
07c37dfeb235213a872192d90877d0cd55635b91 10.0.0.4:6379@16379 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 1 connected
`)
	if err != nil {
		panic(err)
	}
	c, err := rediscluster.New(masters)
	if err != nil {
		panic(err)
	}
	for _, k := range []string{"123456789", "{123456789}.profile"} {
		n, _ := c.Locate(k)
		fmt.Println(k, rediscluster.Slot([]byte(k)), n.Addr)
	}
	// Output:
	// 123456789 12739 10.0.0.3:6379
	// {123456789}.profile 12739 10.0.0.3:6379
}
