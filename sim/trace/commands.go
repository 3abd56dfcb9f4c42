package trace

import "strings"

// What the commands of memcached and Redis do to their keys, and where a
// Redis command names them. One table serves every format: a command name
// means the same in both protocols where both have it (get, set, incr,
// touch), and the kolco format names commands as the client sent them.

// readCommands fetch a value: a cache's hits and misses.
var readCommands = words(`
	get gets gat gats mg item_get
	mget getex getrange substr strlen
	hget hmget hgetall hkeys hvals hlen hexists hstrlen hrandfield hscan
	lrange lindex llen lpos
	smembers sismember smismember scard srandmember sscan sinter sunion sdiff sintercard
	zrange zrangebyscore zrevrange zrevrangebyscore zrangebylex zrevrangebylex zscore zmscore
	zcard zcount zlexcount zrank zrevrank zrandmember zscan
	getbit bitcount bitpos bitfield_ro pfcount
	geopos geodist geohash georadius_ro georadiusbymember_ro geosearch
	xrange xrevrange xlen xread xpending
	json.get json.mget json.type json.strlen json.arrlen json.objkeys json.objlen
	dump`)

// writeCommands store or change a value.
var writeCommands = words(`
	set add replace append prepend cas incr decr ms ma
	setnx setex psetex getset mset msetnx setrange incrby decrby incrbyfloat
	hset hsetnx hmset hdel hincrby hincrbyfloat
	lpush rpush lpushx rpushx lpop rpop lset lrem ltrim linsert lmove rpoplpush blpop brpop blmove brpoplpush lmpop blmpop
	sadd srem spop smove sinterstore sunionstore sdiffstore
	zadd zrem zincrby zpopmin zpopmax bzpopmin bzpopmax zremrangebyrank zremrangebyscore zremrangebylex
	zunionstore zinterstore zdiffstore zrangestore zmpop bzmpop
	setbit bitfield bitop pfadd pfmerge geoadd georadius georadiusbymember geosearchstore
	xadd xdel xtrim xack xclaim xautoclaim xsetid xgroup
	restore rename renamenx copy move
	json.set json.del json.arrappend json.numincrby json.merge json.mset`)

// deleteCommands remove a key.
var deleteCommands = words(`delete md del unlink getdel`)

// keylessCommands name no key, whatever their arguments.
var keylessCommands = words(`
	ping echo select auth hello client config info dbsize flushdb flushall flush_all
	multi exec discard unwatch keys scan randomkey time command quit save bgsave bgrewriteaof
	lastsave slowlog monitor publish spublish subscribe psubscribe ssubscribe unsubscribe
	punsubscribe sunsubscribe pubsub script function cluster readonly readwrite wait waitaof
	reset debug latency module role replicaof slaveof swapdb lolwut failover shutdown sync psync
	replconf acl eval_ro evalsha_ro version verbosity stats watch lru_crawler slabs mn me
	cache_memlimit misbehave`)

// keySpec says where a Redis command names its keys: arguments first
// through last (negative: counted from the end, -1 the last), every step;
// numKeys, when set, is the argument holding how many keys follow it
// (EVAL). size is the argument holding the value written to the first
// key, 0 for none.
type keySpec struct {
	first, last, step, numKeys, size int
}

// redisKeys are the commands whose keys are not the first argument alone.
var redisKeys = map[string]keySpec{
	"set": {1, 1, 1, 0, 2}, "setnx": {1, 1, 1, 0, 2}, "getset": {1, 1, 1, 0, 2}, "append": {1, 1, 1, 0, 2},
	"setex": {1, 1, 1, 0, 3}, "psetex": {1, 1, 1, 0, 3},
	"mget": {1, -1, 1, 0, 0}, "del": {1, -1, 1, 0, 0}, "unlink": {1, -1, 1, 0, 0}, "exists": {1, -1, 1, 0, 0},
	"touch": {1, -1, 1, 0, 0}, "sinter": {1, -1, 1, 0, 0}, "sunion": {1, -1, 1, 0, 0},
	"sdiff": {1, -1, 1, 0, 0}, "pfcount": {1, -1, 1, 0, 0}, "pfmerge": {1, -1, 1, 0, 0},
	"sinterstore": {1, -1, 1, 0, 0}, "sunionstore": {1, -1, 1, 0, 0}, "sdiffstore": {1, -1, 1, 0, 0},
	"mset": {1, -1, 2, 0, 2}, "msetnx": {1, -1, 2, 0, 2},
	"rename": {1, 2, 1, 0, 0}, "renamenx": {1, 2, 1, 0, 0}, "copy": {1, 2, 1, 0, 0}, "smove": {1, 2, 1, 0, 0},
	"rpoplpush": {1, 2, 1, 0, 0}, "lmove": {1, 2, 1, 0, 0}, "brpoplpush": {1, 2, 1, 0, 0}, "blmove": {1, 2, 1, 0, 0},
	"blpop": {1, -2, 1, 0, 0}, "brpop": {1, -2, 1, 0, 0}, "bzpopmin": {1, -2, 1, 0, 0}, "bzpopmax": {1, -2, 1, 0, 0},
	"eval": {0, 0, 1, 2, 0}, "evalsha": {0, 0, 1, 2, 0}, "fcall": {0, 0, 1, 2, 0}, "fcall_ro": {0, 0, 1, 2, 0},
	"zunionstore": {1, 1, 1, 0, 0}, "zinterstore": {1, 1, 1, 0, 0}, "zdiffstore": {1, 1, 1, 0, 0},
	"object": {2, 2, 1, 0, 0}, "memory": {2, 2, 1, 0, 0}, "xgroup": {2, 2, 1, 0, 0},
	"json.mget": {1, -2, 1, 0, 0},
}

// redisKeyArgs returns the positions of the keys in args (args[0] being
// the command, lowercase) and, for each, of the value written to it or -1.
func redisKeyArgs(args [][]byte) (keys, vals []int) {
	name := string(args[0])
	if keylessCommands[name] || len(args) < 2 {
		return nil, nil
	}
	spec, ok := redisKeys[name]
	if !ok {
		return []int{1}, []int{-1}
	}
	first, last := spec.first, spec.last
	if spec.numKeys > 0 {
		if spec.numKeys >= len(args) {
			return nil, nil
		}
		n, ok := smallCount(args[spec.numKeys], len(args))
		if !ok {
			return nil, nil
		}
		first, last = spec.numKeys+1, spec.numKeys+n
	}
	if last < 0 {
		last += len(args)
	}
	for i := first; i <= last && i < len(args); i += spec.step {
		v := -1
		switch {
		case spec.step == 2 && i+1 < len(args): // MSET: each key's value follows it
			v = i + 1
		case i == first && spec.size > 0 && spec.size < len(args):
			v = spec.size
		}
		keys, vals = append(keys, i), append(vals, v)
	}
	return keys, vals
}

// smallCount reads a count of at most limit from decimal digits.
func smallCount(b []byte, limit int) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n = n*10 + int(c-'0'); n > limit {
			return 0, false
		}
	}
	return n, len(b) > 0
}

// OpOf returns what the command of a name (lowercase, as the kolco
// format names it: "get", "hset", "mg") does to its keys: Other for a
// command it does not know.
func OpOf(name string) Op { return opOf(name) }

// opOf returns what a command does to its keys.
func opOf(name string) Op {
	switch {
	case readCommands[name]:
		return Read
	case writeCommands[name]:
		return Write
	case deleteCommands[name]:
		return Delete
	}
	return Other
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
