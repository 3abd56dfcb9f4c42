package goredis_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/goredis"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/membership"
)

// TestHashTagIsGoRedis: go-redis places every key holding "{text}" by the
// text alone, whatever the consistent hash, so shards configured without
// that tag (as beside a kolco proxy Redis pool without hash_tag, which
// places such keys by the whole key) are refused, by New and by Follow,
// with an error naming the pool's matching hash_tag.
func TestHashTagIsGoRedis(t *testing.T) {
	nodes := []kolco.Node{{ID: "shard-a"}, {ID: "shard-b"}, {ID: "shard-c"}}
	// Follow refuses the tag before it reads the source; were it to read
	// it, the missing file would fail it at the deadline instead.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, tag := range []string{"", "[]"} {
		cfg := shards.Config{Distribution: "jump", HashTag: tag}
		_, errNew := goredis.New(cfg, nodes...)
		_, errFollow := goredis.Follow(ctx, &membership.File{Path: "unread.yml"}, cfg)
		for name, err := range map[string]error{"New": errNew, "Follow": errFollow} {
			if !errors.Is(err, shards.ErrBadConfig) || !strings.Contains(err.Error(), `hash_tag: "{}"`) {
				t.Errorf("%s with hash tag %q: %v; want ErrBadConfig naming hash_tag: \"{}\"", name, tag, err)
			}
		}
	}
	sh, err := goredis.New(shards.Config{Distribution: "jump", HashTag: "{}"}, nodes...)
	if err != nil {
		t.Fatal(err)
	}
	// The table places a tagged key as go-redis does: by its tag.
	want, err := sh.Table().Index("42")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"user:{42}:cart", "{42}", "x{42}y"} {
		if got, err := sh.Table().Index(key); err != nil || got != want {
			t.Errorf("%q on shard %d (%v), its tag \"42\" on %d", key, got, err, want)
		}
	}
}
