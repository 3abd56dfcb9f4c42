package rediscluster

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
)

var sink int

// clusterNodes is CLUSTER NODES output in the format of Redis 7.0, with a
// replica, a master without slots, a hostname and a migrating slot.
const clusterNodes = `07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,cache-4 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383 [10923->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5459 5460
6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@31005 master - 0 1426238316232 5 connected
`

func TestParseClusterNodes(t *testing.T) {
	got, err := ParseClusterNodes(clusterNodes)
	if err != nil {
		t.Fatal(err)
	}
	want := []Master{
		{"67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1", "127.0.0.1:30002", []SlotRange{{5461, 10922}}},
		{"292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f", "127.0.0.1:30003", []SlotRange{{10923, 16383}}},
		{"e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca", "127.0.0.1:30001", []SlotRange{{0, 5459}, {5460, 5460}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseClusterNodes =\n%v\nwant\n%v", got, want)
	}
	for _, c := range []struct {
		text string
		want error
	}{
		{"", kolco.ErrNoNodes},
		{"id 1.2.3.4:1@2 slave x 0 0 1 connected", kolco.ErrNoNodes},
		{"id 1.2.3.4:1@2 master", kolco.ErrBadConfig},
		{"id 1.2.3.4:1@2 master - 0 0 1 connected 5-2", kolco.ErrBadConfig},
		{"id 1.2.3.4:1@2 master - 0 0 1 connected 16384", kolco.ErrBadConfig},
		{"id 1.2.3.4:1@2 master - 0 0 1 connected x-1", kolco.ErrBadConfig},
	} {
		t.Run(c.text, func(t *testing.T) {
			if _, err := ParseClusterNodes(c.text); !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestIndexFollowsRanges(t *testing.T) {
	masters, _ := ParseClusterNodes(clusterNodes)
	c, err := New(masters)
	if err != nil {
		t.Fatal(err)
	}
	// "123456789" has CRC16/XMODEM 0x31C3, slot 12739; the tag of
	// "{123456789}x" is the same text.
	for _, k := range []string{"123456789", "{123456789}x"} {
		if s := Slot([]byte(k)); s != 0x31C3 {
			t.Fatalf("Slot(%q) = %d, want %d", k, s, 0x31C3)
		}
		if i := c.Index([]byte(k)); i != 1 {
			t.Fatalf("Index(%q) = %d, want 1 (slots 10923-16383)", k, i)
		}
	}
	for slot, want := range map[int]int{0: 2, 5459: 2, 5460: 2, 5461: 0, 10922: 0, 10923: 1, 16383: 1} {
		t.Run(fmt.Sprint("slot ", slot), func(t *testing.T) {
			if got := c.IndexSlot(slot); got != want {
				t.Errorf("IndexSlot = %d, want %d", got, want)
			}
		})
	}
	n, _ := c.Locate("123456789")
	if n.ID != masters[1].ID || n.Addr != "127.0.0.1:30003" || n.Weight != 5461 {
		t.Fatalf("Locate = %+v", n)
	}
}

func TestNewErrors(t *testing.T) {
	all := []SlotRange{{0, SlotCount - 1}}
	for _, c := range []struct {
		name    string
		masters []Master
		want    error
	}{
		{"no masters", nil, kolco.ErrNoNodes},
		{"slots not served", []Master{{Addr: "a:1", Slots: []SlotRange{{0, 100}}}}, kolco.ErrBadConfig},
		{"a slot served twice", []Master{{Addr: "a:1", Slots: all}, {Addr: "b:1", Slots: []SlotRange{{5, 5}}}}, kolco.ErrBadConfig},
		{"slot 16384", []Master{{Addr: "a:1", Slots: []SlotRange{{0, SlotCount}}}}, kolco.ErrBadConfig},
		{"range backwards", []Master{{Addr: "a:1", Slots: []SlotRange{{9, 3}}}}, kolco.ErrBadConfig},
		{"no id or address", []Master{{Slots: all}}, kolco.ErrBadNodeID},
		{"an id twice", []Master{{ID: "x", Addr: "a:1", Slots: all}, {ID: "x", Addr: "b:1"}}, kolco.ErrDuplicateNode},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := New(c.masters); !errors.Is(err, c.want) {
				t.Errorf("New(%v) err = %v, want %v", c.masters, err, c.want)
			}
		})
	}
}

func TestLocateN(t *testing.T) {
	masters, _ := ParseClusterNodes(clusterNodes)
	c, _ := New(masters)
	got, err := c.LocateN(nil, "123456789", 3)
	if err != nil || len(got) != 3 || got[0].Addr != "127.0.0.1:30003" || got[1].Addr != "127.0.0.1:30001" || got[2].Addr != "127.0.0.1:30002" {
		t.Fatalf("LocateN = %v, %v; want 30003 then the following ranges' 30001, 30002", got, err)
	}
	if _, err := c.LocateN(nil, "k", 0); !errors.Is(err, kolco.ErrBadCount) {
		t.Fatalf("n=0 err = %v", err)
	}
	if nodes := c.Nodes(); len(nodes) != 3 || nodes[0].ID > nodes[1].ID {
		t.Fatalf("Nodes = %v", nodes)
	}
}

func TestNoAllocs(t *testing.T) {
	if bytestr.Copies {
		t.Skip("the purego build copies keys; zero allocations are promised for the default build")
	}
	masters, _ := ParseClusterNodes(clusterNodes)
	c, _ := New(masters)
	key := strings.Repeat("long-key-", 20)
	kb := []byte(key)
	dst := make([]kolco.Node, 0, 3)
	if a := testing.AllocsPerRun(100, func() { n, _ := c.Locate(key); sink += len(n.ID) + c.Index(kb) }); a != 0 {
		t.Errorf("Locate/Index allocate %v", a)
	}
	if a := testing.AllocsPerRun(100, func() { dst, _ = c.LocateN(dst[:0], key, 3) }); a != 0 {
		t.Errorf("LocateN allocates %v", a)
	}
}

func FuzzParseClusterNodes(f *testing.F) {
	f.Add(clusterNodes)
	f.Add("a 1:1@2 master - 0 0 1 connected 0-16383")
	f.Add("a 1:1 master,fail - 0 0 1 connected 0-8191 [1-<-b]\nb 2:2 master - 0 0 1 connected 8192-16383")
	f.Fuzz(func(t *testing.T, text string) {
		masters, err := ParseClusterNodes(text)
		if err != nil {
			return
		}
		c, err := New(masters)
		if err != nil {
			return
		}
		if i := c.Index([]byte(text)); i < 0 || i >= len(masters) {
			t.Fatalf("Index = %d", i)
		}
	})
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte("{user1000}.following"), uint16(100))
	f.Add([]byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, key []byte, split uint16) {
		s := int(split) % (SlotCount - 1)
		c, err := New([]Master{{Addr: "a:1", Slots: []SlotRange{{0, s}}}, {Addr: "b:1", Slots: []SlotRange{{s + 1, SlotCount - 1}}}})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if Slot(key) > s {
			want = 1
		}
		if got := c.Index(key); got != want {
			t.Fatalf("Index = %d, want %d (slot %d, split %d)", got, want, Slot(key), s)
		}
	})
}

func BenchmarkLocate(b *testing.B) {
	key := "{user:12345}:profile"
	for _, n := range []int{3, 30, 300} {
		masters := make([]Master, n)
		per := SlotCount / n
		for i := range masters {
			last := (i+1)*per - 1
			if i == n-1 {
				last = SlotCount - 1
			}
			masters[i] = Master{Addr: fmt.Sprintf("10.0.0.%d:6379", i), Slots: []SlotRange{{i * per, last}}}
		}
		c, _ := New(masters)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				nd, _ := c.Locate(key)
				sink += len(nd.ID)
			}
		})
	}
}
