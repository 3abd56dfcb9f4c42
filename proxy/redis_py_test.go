package proxy

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/internal/testproc"
)

// redisPyScript runs redis-py through the proxy at argv[1] (a fleet of two
// proxies answering cluster clients, the other at argv[2]): a transaction
// pipeline, WATCH, pub/sub, the SCAN iterator, and RedisCluster, which
// must find both proxies as the cluster's primaries. It prints "ok".
const redisPyScript = `
import sys, redis
from redis.cluster import RedisCluster

host, port = sys.argv[1].rsplit(":", 1)
r = redis.Redis(host=host, port=int(port), client_name="py")
p = r.pipeline(transaction=True)
p.set("{u}a", 1)
p.incr("{u}a")
p.hset("{u}h", "f", "v")
assert p.execute() == [True, 2, 1]
with r.pipeline() as p:
    p.watch("{u}a")
    v = int(p.get("{u}a"))
    p.multi()
    p.set("{u}a", v + 1)
    p.execute()
assert r.get("{u}a") == b"3", r.get("{u}a")
assert r.client_getname() == "py"

ps = r.pubsub()
ps.subscribe("news")
first = ps.get_message(timeout=10)
assert first["type"] == "subscribe", first
assert r.publish("news", "hi") == 1
m = ps.get_message(timeout=10)
assert m is not None and m["data"] == b"hi", m
ps.close()

for i in range(40):
    r.set("py:%d" % i, i)
assert len(set(r.scan_iter(match="py:*", count=7))) == 40

rc = RedisCluster(host=host, port=int(port))
for i in range(40):
    assert rc.get("py:%d" % i) == str(i).encode()
    rc.set("pc:%d" % i, i)
names = sorted(n.name for n in rc.get_primaries())
assert names == sorted(sys.argv[1:3]), names
print("ok")
`

// pythonRedis returns Debian's /usr/bin/python3 when it has redis-py
// (python3-redis); without it the test is skipped, and fails in CI, where
// .ci/run installs it.
func pythonRedis(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	msg := "Debian's /usr/bin/python3 with redis-py not found (install python3-redis)"
	if _, err := os.Stat(py); err == nil {
		if testproc.Run(exec.Command(py, "-c", "import redis.cluster")) == nil {
			return py
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// TestRedisPy runs redis-py's Redis (pipeline(transaction=True), WATCH,
// pubsub, scan_iter) and RedisCluster through two proxies of a pool that
// answers cluster clients.
func TestRedisPy(t *testing.T) {
	t.Parallel()
	py := pythonRedis(t)
	_, addrs, _ := clusterFleet(t)
	out, err := testproc.CombinedOutput(exec.Command(py, "-c", redisPyScript, addrs[0], addrs[1]))
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("redis-py: %v\n%s", err, out)
	}
}
