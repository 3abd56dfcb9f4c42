package slots_test

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/slots"
)

func ExampleKeySlot() {
	fmt.Println(slots.KeySlot("123456789"))
	fmt.Println(slots.KeySlot("{user1000}.following") == slots.KeySlot("{user1000}.followers"))
	fmt.Println(slots.HashTag("foo{{bar}}zap"))
	// Output:
	// 12739
	// true
	// {bar
}

// Adding a third node to two moves 5 of 16 slots, all onto the new node:
// a keeps 6 (it wins the tie by ID), b keeps 5.
func ExampleMap_Migrate() {
	m, _ := slots.New([]kolco.Node{{ID: "a"}, {ID: "b"}}, slots.Config{Count: 16})
	fmt.Println(m.Ranges())
	moves, _ := m.Migrate(kolco.Change{Add: []kolco.Node{{ID: "c"}}})
	for _, mv := range moves {
		fmt.Printf("slot %d: %s -> %s\n", mv.Slot, mv.From, mv.To)
	}
	// Output:
	// [{0 7 a} {8 15 b}]
	// slot 6: a -> c
	// slot 7: a -> c
	// slot 13: b -> c
	// slot 14: b -> c
	// slot 15: b -> c
}
