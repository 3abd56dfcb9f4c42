package redis

import "slices"

// spec is one row of the command table: the name, arity and legacy key
// range exactly as redis-server 7.0.15's COMMAND INFO gives them
// (TestTableMatchesServer holds them to it), and how the proxy handles the
// command.
type spec struct {
	name              string
	arity             int
	first, last, step int
	how               how
}

// how is what the table says of a command beyond COMMAND INFO.
type how struct {
	class     Class
	keys      finder
	merge     Merge
	why       reason
	container bool // OBJECT, XINFO, XGROUP, MEMORY: the subcommand decides
}

var (
	single    = how{class: ClassSingle}
	local     = how{class: ClassLocal}
	anyServer = how{class: ClassAnyServer}
	container = how{class: ClassAnyServer, container: true}
)

func split(m Merge) how    { return how{class: ClassSplit, merge: m} }
func same(f finder) how    { return how{class: ClassSameServer, keys: f} }
func refused(w reason) how { return how{class: ClassRefused, why: w} }

func refusedMovable(w reason) how {
	return how{class: ClassRefused, why: w, keys: keysNotRead}
}

// transaction is a command a proxy serves on a connection pinned for it.
var transaction = how{class: ClassTransaction, why: whyTransaction}

// pubsub is a command a proxy serves routing channels as keys.
var pubsub = how{class: ClassPubSub, why: whyPubSub}

// blocking is a command a proxy serves on a connection of its own.
var blocking = how{class: ClassBlocking, why: whyBlocking}

// everyServer is a command a proxy asks of every server.
var everyServer = how{class: ClassEveryServer, why: whyKeyspace}

// reason says why the proxy refuses a command.
type reason uint8

const (
	whyNone        reason = iota
	whyTransaction        // MULTI/EXEC span servers and hold state per connection
	whyBlocking           // WAIT counts the acknowledgements of one connection's writes
	whyPubSub             // subscriptions turn the connection into a push stream
	whyKeyspace           // SCAN, KEYS, FLUSHDB, ... see one server's part of the keys only
	whyDatabase           // the proxy serves one database
	whyCluster            // the servers are not a Redis Cluster
	whyScript             // SCRIPT LOAD and FUNCTION would have to reach every server
	whyConnection         // RESET acts on the proxy's server connection
	whyAdmin              // server administration, per server, not through a proxy
)

var reasonText = [...]string{
	whyTransaction: "transactions",
	whyBlocking:    "a client's writes go on shared server connections, whose acknowledgements WAIT cannot count",
	whyPubSub:      "pub/sub",
	whyKeyspace:    "commands over the whole keyspace",
	whyDatabase:    "databases other than 0",
	whyCluster:     "cluster commands",
	whyScript:      "script and function management",
	whyConnection:  "connection state",
	whyAdmin:       "server administration",
}

// specs lists every command of redis 7.0, and the subcommands of the
// containers whose subcommands take keys.
var specs = [...]spec{
	{"acl", -2, 0, 0, 0, refused(whyAdmin)},
	{"append", 3, 1, 1, 1, single},
	{"asking", 1, 0, 0, 0, refused(whyCluster)},
	{"auth", -2, 0, 0, 0, local},
	{"bgrewriteaof", 1, 0, 0, 0, refused(whyAdmin)},
	{"bgsave", -1, 0, 0, 0, refused(whyAdmin)},
	{"bitcount", -2, 1, 1, 1, single},
	{"bitfield", -2, 1, 1, 1, single},
	{"bitfield_ro", -2, 1, 1, 1, single},
	{"bitop", -4, 2, -1, 1, same(keysRange)},
	{"bitpos", -3, 1, 1, 1, single},
	{"blmove", 6, 1, 2, 1, blocking},
	{"blmpop", -5, 0, 0, 0, how{class: ClassBlocking, keys: keysBlockPopNum}},
	{"blpop", -3, 1, -2, 1, blocking},
	{"brpop", -3, 1, -2, 1, blocking},
	{"brpoplpush", 4, 1, 2, 1, blocking},
	{"bzmpop", -5, 0, 0, 0, how{class: ClassBlocking, keys: keysBlockPopNum}},
	{"bzpopmax", -3, 1, -2, 1, blocking},
	{"bzpopmin", -3, 1, -2, 1, blocking},
	{"client", -2, 0, 0, 0, local},
	{"cluster", -2, 0, 0, 0, refused(whyCluster)},
	{"command", -1, 0, 0, 0, anyServer},
	{"config", -2, 0, 0, 0, refused(whyAdmin)},
	{"copy", -3, 1, 2, 1, same(keysRange)},
	{"dbsize", 1, 0, 0, 0, everyServer},
	{"debug", -2, 0, 0, 0, refused(whyAdmin)},
	{"decr", 2, 1, 1, 1, single},
	{"decrby", 3, 1, 1, 1, single},
	{"del", -2, 1, -1, 1, split(MergeSum)},
	{"discard", 1, 0, 0, 0, transaction},
	{"dump", 2, 1, 1, 1, single},
	{"echo", 2, 0, 0, 0, local},
	{"eval", -3, 0, 0, 0, same(keysEval)},
	{"eval_ro", -3, 0, 0, 0, same(keysEval)},
	{"evalsha", -3, 0, 0, 0, same(keysEval)},
	{"evalsha_ro", -3, 0, 0, 0, same(keysEval)},
	{"exec", 1, 0, 0, 0, transaction},
	{"exists", -2, 1, -1, 1, split(MergeSum)},
	{"expire", -3, 1, 1, 1, single},
	{"expireat", -3, 1, 1, 1, single},
	{"expiretime", 2, 1, 1, 1, single},
	{"failover", -1, 0, 0, 0, refused(whyAdmin)},
	{"fcall", -3, 0, 0, 0, same(keysEval)},
	{"fcall_ro", -3, 0, 0, 0, same(keysEval)},
	{"flushall", -1, 0, 0, 0, everyServer},
	{"flushdb", -1, 0, 0, 0, everyServer},
	{"function", -2, 0, 0, 0, refused(whyScript)},
	{"geoadd", -5, 1, 1, 1, single},
	{"geodist", -4, 1, 1, 1, single},
	{"geohash", -2, 1, 1, 1, single},
	{"geopos", -2, 1, 1, 1, single},
	{"georadius", -6, 1, 1, 1, same(keysGeo)},
	{"georadius_ro", -6, 1, 1, 1, single},
	{"georadiusbymember", -5, 1, 1, 1, same(keysGeo)},
	{"georadiusbymember_ro", -5, 1, 1, 1, single},
	{"geosearch", -7, 1, 1, 1, single},
	{"geosearchstore", -8, 1, 2, 1, same(keysRange)},
	{"get", 2, 1, 1, 1, single},
	{"getbit", 3, 1, 1, 1, single},
	{"getdel", 2, 1, 1, 1, single},
	{"getex", -2, 1, 1, 1, single},
	{"getrange", 4, 1, 1, 1, single},
	{"getset", 3, 1, 1, 1, single},
	{"hdel", -3, 1, 1, 1, single},
	{"hello", -1, 0, 0, 0, local},
	{"hexists", 3, 1, 1, 1, single},
	{"hget", 3, 1, 1, 1, single},
	{"hgetall", 2, 1, 1, 1, single},
	{"hincrby", 4, 1, 1, 1, single},
	{"hincrbyfloat", 4, 1, 1, 1, single},
	{"hkeys", 2, 1, 1, 1, single},
	{"hlen", 2, 1, 1, 1, single},
	{"hmget", -3, 1, 1, 1, single},
	{"hmset", -4, 1, 1, 1, single},
	{"hrandfield", -2, 1, 1, 1, single},
	{"hscan", -3, 1, 1, 1, single},
	{"hset", -4, 1, 1, 1, single},
	{"hsetnx", 4, 1, 1, 1, single},
	{"hstrlen", 3, 1, 1, 1, single},
	{"hvals", 2, 1, 1, 1, single},
	{"incr", 2, 1, 1, 1, single},
	{"incrby", 3, 1, 1, 1, single},
	{"incrbyfloat", 3, 1, 1, 1, single},
	{"info", -1, 0, 0, 0, how{class: ClassEveryServer, why: whyAdmin}},
	{"keys", 2, 0, 0, 0, everyServer},
	{"lastsave", 1, 0, 0, 0, refused(whyAdmin)},
	{"latency", -2, 0, 0, 0, refused(whyAdmin)},
	{"lcs", -3, 1, 2, 1, same(keysRange)},
	{"lindex", 3, 1, 1, 1, single},
	{"linsert", 5, 1, 1, 1, single},
	{"llen", 2, 1, 1, 1, single},
	{"lmove", 5, 1, 2, 1, same(keysRange)},
	{"lmpop", -4, 0, 0, 0, same(keysPopNum)},
	{"lolwut", -1, 0, 0, 0, anyServer},
	{"lpop", -2, 1, 1, 1, single},
	{"lpos", -3, 1, 1, 1, single},
	{"lpush", -3, 1, 1, 1, single},
	{"lpushx", -3, 1, 1, 1, single},
	{"lrange", 4, 1, 1, 1, single},
	{"lrem", 4, 1, 1, 1, single},
	{"lset", 4, 1, 1, 1, single},
	{"ltrim", 4, 1, 1, 1, single},
	{"memory", -2, 0, 0, 0, container},
	{"memory|doctor", 2, 0, 0, 0, refused(whyAdmin)},
	{"memory|help", 2, 0, 0, 0, anyServer},
	{"memory|malloc-stats", 2, 0, 0, 0, refused(whyAdmin)},
	{"memory|purge", 2, 0, 0, 0, refused(whyAdmin)},
	{"memory|stats", 2, 0, 0, 0, refused(whyAdmin)},
	{"memory|usage", -3, 2, 2, 1, single},
	{"mget", -2, 1, -1, 1, split(MergeArray)},
	{"migrate", -6, 3, 3, 1, refusedMovable(whyCluster)},
	{"module", -2, 0, 0, 0, refused(whyAdmin)},
	{"monitor", 1, 0, 0, 0, refused(whyAdmin)},
	{"move", 3, 1, 1, 1, refused(whyDatabase)},
	{"mset", -3, 1, -1, 2, split(MergeOK)},
	{"msetnx", -3, 1, -1, 2, same(keysRange)},
	{"multi", 1, 0, 0, 0, transaction},
	{"object", -2, 0, 0, 0, container},
	{"object|encoding", 3, 2, 2, 1, single},
	{"object|freq", 3, 2, 2, 1, single},
	{"object|help", 2, 0, 0, 0, anyServer},
	{"object|idletime", 3, 2, 2, 1, single},
	{"object|refcount", 3, 2, 2, 1, single},
	{"persist", 2, 1, 1, 1, single},
	{"pexpire", -3, 1, 1, 1, single},
	{"pexpireat", -3, 1, 1, 1, single},
	{"pexpiretime", 2, 1, 1, 1, single},
	{"pfadd", -2, 1, 1, 1, single},
	{"pfcount", -2, 1, -1, 1, same(keysRange)},
	{"pfdebug", 3, 2, 2, 1, refused(whyAdmin)},
	{"pfmerge", -2, 1, -1, 1, same(keysRange)},
	{"pfselftest", 1, 0, 0, 0, refused(whyAdmin)},
	{"ping", -1, 0, 0, 0, local},
	{"psetex", 4, 1, 1, 1, single},
	{"psubscribe", -2, 0, 0, 0, pubsub},
	{"psync", -3, 0, 0, 0, refused(whyAdmin)},
	{"pttl", 2, 1, 1, 1, single},
	{"publish", 3, 0, 0, 0, pubsub},
	{"pubsub", -2, 0, 0, 0, pubsub},
	{"punsubscribe", -1, 0, 0, 0, pubsub},
	{"quit", -1, 0, 0, 0, local},
	{"randomkey", 1, 0, 0, 0, everyServer},
	{"readonly", 1, 0, 0, 0, refused(whyCluster)},
	{"readwrite", 1, 0, 0, 0, refused(whyCluster)},
	{"rename", 3, 1, 2, 1, same(keysRange)},
	{"renamenx", 3, 1, 2, 1, same(keysRange)},
	{"replconf", -1, 0, 0, 0, refused(whyAdmin)},
	{"replicaof", 3, 0, 0, 0, refused(whyAdmin)},
	{"reset", 1, 0, 0, 0, refused(whyConnection)},
	{"restore", -4, 1, 1, 1, single},
	{"restore-asking", -4, 1, 1, 1, refused(whyCluster)},
	{"role", 1, 0, 0, 0, refused(whyAdmin)},
	{"rpop", -2, 1, 1, 1, single},
	{"rpoplpush", 3, 1, 2, 1, same(keysRange)},
	{"rpush", -3, 1, 1, 1, single},
	{"rpushx", -3, 1, 1, 1, single},
	{"sadd", -3, 1, 1, 1, single},
	{"save", 1, 0, 0, 0, refused(whyAdmin)},
	{"scan", -2, 0, 0, 0, everyServer},
	{"scard", 2, 1, 1, 1, single},
	{"script", -2, 0, 0, 0, how{class: ClassEveryServer, why: whyScript}},
	{"sdiff", -2, 1, -1, 1, same(keysRange)},
	{"sdiffstore", -3, 1, -1, 1, same(keysRange)},
	{"select", 2, 0, 0, 0, local},
	{"set", -3, 1, 1, 1, single},
	{"setbit", 4, 1, 1, 1, single},
	{"setex", 4, 1, 1, 1, single},
	{"setnx", 3, 1, 1, 1, single},
	{"setrange", 4, 1, 1, 1, single},
	{"shutdown", -1, 0, 0, 0, refused(whyAdmin)},
	{"sinter", -2, 1, -1, 1, same(keysRange)},
	{"sintercard", -3, 0, 0, 0, same(keysCardNum)},
	{"sinterstore", -3, 1, -1, 1, same(keysRange)},
	{"sismember", 3, 1, 1, 1, single},
	{"slaveof", 3, 0, 0, 0, refused(whyAdmin)},
	{"slowlog", -2, 0, 0, 0, refused(whyAdmin)},
	{"smembers", 2, 1, 1, 1, single},
	{"smismember", -3, 1, 1, 1, single},
	{"smove", 4, 1, 2, 1, same(keysRange)},
	{"sort", -2, 1, 1, 1, same(keysSort)},
	{"sort_ro", -2, 1, 1, 1, same(keysSortRO)},
	{"spop", -2, 1, 1, 1, single},
	{"spublish", 3, 1, 1, 1, pubsub},
	{"srandmember", -2, 1, 1, 1, single},
	{"srem", -3, 1, 1, 1, single},
	{"sscan", -3, 1, 1, 1, single},
	{"ssubscribe", -2, 1, -1, 1, pubsub},
	{"strlen", 2, 1, 1, 1, single},
	{"subscribe", -2, 0, 0, 0, pubsub},
	{"substr", 4, 1, 1, 1, single},
	{"sunion", -2, 1, -1, 1, same(keysRange)},
	{"sunionstore", -3, 1, -1, 1, same(keysRange)},
	{"sunsubscribe", -1, 1, -1, 1, pubsub},
	{"swapdb", 3, 0, 0, 0, refused(whyDatabase)},
	{"sync", 1, 0, 0, 0, refused(whyAdmin)},
	{"time", 1, 0, 0, 0, refused(whyAdmin)},
	{"touch", -2, 1, -1, 1, split(MergeSum)},
	{"ttl", 2, 1, 1, 1, single},
	{"type", 2, 1, 1, 1, single},
	{"unlink", -2, 1, -1, 1, split(MergeSum)},
	{"unsubscribe", -1, 0, 0, 0, pubsub},
	{"unwatch", 1, 0, 0, 0, transaction},
	{"wait", 3, 0, 0, 0, refused(whyBlocking)},
	{"watch", -2, 1, -1, 1, transaction},
	{"xack", -4, 1, 1, 1, single},
	{"xadd", -5, 1, 1, 1, single},
	{"xautoclaim", -6, 1, 1, 1, single},
	{"xclaim", -6, 1, 1, 1, single},
	{"xdel", -3, 1, 1, 1, single},
	{"xgroup", -2, 0, 0, 0, container},
	{"xgroup|create", -5, 2, 2, 1, single},
	{"xgroup|createconsumer", 5, 2, 2, 1, single},
	{"xgroup|delconsumer", 5, 2, 2, 1, single},
	{"xgroup|destroy", 4, 2, 2, 1, single},
	{"xgroup|help", 2, 0, 0, 0, anyServer},
	{"xgroup|setid", -5, 2, 2, 1, single},
	{"xinfo", -2, 0, 0, 0, container},
	{"xinfo|consumers", 4, 2, 2, 1, single},
	{"xinfo|groups", 3, 2, 2, 1, single},
	{"xinfo|help", 2, 0, 0, 0, anyServer},
	{"xinfo|stream", -3, 2, 2, 1, single},
	{"xlen", 2, 1, 1, 1, single},
	{"xpending", -3, 1, 1, 1, single},
	{"xrange", -4, 1, 1, 1, single},
	{"xread", -4, 0, 0, 0, how{class: ClassBlocking, keys: keysStreams}},
	{"xreadgroup", -7, 0, 0, 0, how{class: ClassBlocking, keys: keysStreams}},
	{"xrevrange", -4, 1, 1, 1, single},
	{"xsetid", -3, 1, 1, 1, single},
	{"xtrim", -4, 1, 1, 1, single},
	{"zadd", -4, 1, 1, 1, single},
	{"zcard", 2, 1, 1, 1, single},
	{"zcount", 4, 1, 1, 1, single},
	{"zdiff", -3, 0, 0, 0, same(keysZNum)},
	{"zdiffstore", -4, 1, 1, 1, same(keysStoreNum)},
	{"zincrby", 4, 1, 1, 1, single},
	{"zinter", -3, 0, 0, 0, same(keysZNum)},
	{"zintercard", -3, 0, 0, 0, same(keysZNum)},
	{"zinterstore", -4, 1, 1, 1, same(keysStoreNum)},
	{"zlexcount", 4, 1, 1, 1, single},
	{"zmpop", -4, 0, 0, 0, same(keysPopNum)},
	{"zmscore", -3, 1, 1, 1, single},
	{"zpopmax", -2, 1, 1, 1, single},
	{"zpopmin", -2, 1, 1, 1, single},
	{"zrandmember", -2, 1, 1, 1, single},
	{"zrange", -4, 1, 1, 1, single},
	{"zrangebylex", -4, 1, 1, 1, single},
	{"zrangebyscore", -4, 1, 1, 1, single},
	{"zrangestore", -5, 1, 2, 1, same(keysRange)},
	{"zrank", 3, 1, 1, 1, single},
	{"zrem", -3, 1, 1, 1, single},
	{"zremrangebylex", 4, 1, 1, 1, single},
	{"zremrangebyrank", 4, 1, 1, 1, single},
	{"zremrangebyscore", 4, 1, 1, 1, single},
	{"zrevrange", -4, 1, 1, 1, single},
	{"zrevrangebylex", -4, 1, 1, 1, single},
	{"zrevrangebyscore", -4, 1, 1, 1, single},
	{"zrevrank", 3, 1, 1, 1, single},
	{"zscan", -3, 1, 1, 1, single},
	{"zscore", 3, 1, 1, 1, single},
	{"zunion", -3, 0, 0, 0, same(keysZNum)},
	{"zunionstore", -4, 1, 1, 1, same(keysStoreNum)}}

// readOnly are the commands redis-server 7.0 flags readonly: they read
// the keys they name and change none (TestTableMatchesServer holds the
// list to the server's flags). Every other keyed command may change its
// keys.
var readOnly = []string{
	"bitcount", "bitfield_ro", "bitpos", "dbsize", "dump", "eval_ro", "evalsha_ro", "exists",
	"expiretime", "fcall_ro", "geodist", "geohash", "geopos", "georadius_ro", "georadiusbymember_ro",
	"geosearch", "get", "getbit", "getrange", "hexists", "hget", "hgetall", "hkeys", "hlen", "hmget",
	"hrandfield", "hscan", "hstrlen", "hvals", "keys", "lcs", "lindex", "llen", "lolwut", "lpos",
	"lrange", "mget", "pexpiretime", "pfcount", "pttl", "randomkey", "scan", "scard", "sdiff",
	"sinter", "sintercard", "sismember", "smembers", "smismember", "sort_ro", "srandmember", "sscan",
	"strlen", "substr", "sunion", "touch", "ttl", "type", "xlen", "xpending", "xrange", "xread",
	"xrevrange", "zcard", "zcount", "zdiff", "zinter", "zintercard", "zlexcount", "zmscore",
	"zrandmember", "zrange", "zrangebylex", "zrangebyscore", "zrank", "zrevrange", "zrevrangebylex",
	"zrevrangebyscore", "zrevrank", "zscan", "zscore", "zunion", "memory|usage", "object|encoding",
	"object|freq", "object|idletime", "object|refcount", "xinfo|consumers", "xinfo|groups", "xinfo|stream",
}

// table maps each command's lower-case name to its entry, and byID each
// command's ID, subcommands included. They are built once and never
// changed.
var table, byID = buildTable()

func buildTable() (map[string]*Command, []*Command) {
	t := make(map[string]*Command, len(specs))
	ids := make([]*Command, len(specs))
	for i := range specs {
		s := &specs[i]
		c := &Command{id: i, name: s.name, arity: s.arity, first: s.first, last: s.last, step: s.step,
			class: s.how.class, keys: s.how.keys, merge: s.how.merge, why: s.how.why, readOnly: slices.Contains(readOnly, s.name)}
		switch c.class {
		case ClassRefused, ClassTransaction, ClassPubSub, ClassBlocking, ClassEveryServer:
			c.refused = replyError(ErrUnsupported, "ERR '"+c.name+"' is not supported by the proxy: "+reasonText[c.why], false)
		case ClassSameServer:
			c.crossSrv = replyError(ErrCrossServer, "ERR keys of '"+c.name+"' map to different servers; hash tags can keep them on one", false)
			c.noKeys = replyError(ErrNoKeys, "ERR '"+c.name+"' without keys cannot be routed by the proxy", false)
		}
		if s.how.container {
			c.subs = map[string]*Command{}
		}
		ids[i] = c
		parent, sub, isSub := cut(s.name)
		if isSub {
			t[parent].subs[sub] = c
			continue
		}
		t[s.name] = c
	}
	return t, ids
}

// cut splits "container|sub".
func cut(name string) (parent, sub string, ok bool) {
	for i := 0; i < len(name); i++ {
		if name[i] == '|' {
			return name[:i], name[i+1:], true
		}
	}
	return name, "", false
}
