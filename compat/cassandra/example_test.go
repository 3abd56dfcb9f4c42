package cassandra_test

import (
	"encoding/binary"
	"fmt"

	"github.com/kolco-dev/kolco/compat/cassandra"
)

// Find the primary replica of an int partition key. The token of the int
// 0x12345678 (4 bytes big-endian) is the one cassandra-sharp's
// Murmur3Partitioner test publishes.
func Example() {
	ring, err := cassandra.New([]cassandra.Endpoint{
		{Addr: "10.0.0.1", Tokens: []int64{-9223372036854775808}},
		{Addr: "10.0.0.2", Tokens: []int64{-3074457345618258603}},
		{Addr: "10.0.0.3", Tokens: []int64{3074457345618258602}},
	})
	if err != nil {
		panic(err)
	}
	key := binary.BigEndian.AppendUint32(nil, 0x12345678)
	fmt.Println(cassandra.Token(key), ring.Index(key))
	// Output: -8827056344306985898 1
}
