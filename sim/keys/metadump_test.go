package keys

import "testing"

func TestFromItemsKeepsEachKeyOnce(t *testing.T) {
	ks := FromItems([]Item{{"a", 10, -1}, {"b", 20, -1}, {"a", 99, -1}})
	if ks.Len() != 2 || ks.Key(0) != "a" || ks.Size(0) != 10 || ks.Key(1) != "b" || ks.TotalSize() != 30 {
		t.Errorf("%d keys, sizes %v", ks.Len(), ks.Sizes)
	}
}
