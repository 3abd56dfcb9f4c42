package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// The connection commands: HELLO and CLIENT, answered by the proxy for the
// client's own connection to it, never passed to a server connection that
// other clients share.
//
// RESP3. A client that sends HELLO 3 speaks RESP3 from its reply on, and
// its requests go on server connections that speak RESP3 too (each
// server's second set of server_connections, which said HELLO 3 in their
// handshake: see redisDialects), as do its transactions', blocking
// commands' and subscriptions' connections of its own: every reply a
// server gives it is the server's own RESP3 reply, maps, sets, doubles and
// pushes as redis-server types them. The proxy could instead speak RESP2
// to every server and rewrite replies for RESP3 clients, but which array
// is a map and which string a double is known to each command's reply
// code in redis-server, not to the protocol: a table of it would be a
// second, drifting copy. The proxy's own replies (HELLO, CLIENT, merged
// replies, pub/sub confirmations, null EXEC) are typed as redis-server
// types them for the client's protocol. The cost: a RESP3 client's
// requests do not share a pipelined connection with RESP2 clients'.

// The connection commands the client's reader treats apart.
var (
	cmdHello  = redis.Lookup("hello")
	cmdClient = redis.Lookup("client")
)

// helloVersion is the version HELLO reports: the Redis whose commands the
// proxy's table follows (redis.Lookup), so that clients that choose what
// to send by the version choose what the proxy serves.
const helloVersion = "7.0.15"

// redisConnState is what a client's connection commands set: the protocol
// it speaks, and what it said of itself, which other clients read (see
// redisAbout).
type redisConnState struct {
	c *client
	// proto is the protocol the client speaks, RESP2 until its HELLO 3.
	proto redis.Proto
	// about is the last of what the client said, as published in
	// c.about; only the client's goroutine changes it.
	about redisAbout
	// view is the cluster clusterOf presents to the client (see
	// redis_cluster.go).
	view      *clusterView
	clusterOf *pool
}

// redisAbout is what a Redis client said of itself, the protocol it speaks,
// when it connected and whether it is subscribed: its line in CLIENT LIST.
type redisAbout struct {
	name, libName, libVer string
	proto                 redis.Proto
	since                 time.Time
	sub                   bool
}

func newRedisConnState(c *client) redisConnState {
	cs := redisConnState{c: c, proto: redis.RESP2, about: redisAbout{proto: redis.RESP2, since: time.Now()}}
	cs.publish()
	return cs
}

// publish makes what the client said readable by the other clients.
func (cs *redisConnState) publish() {
	a := cs.about
	cs.c.about.Store(&a)
}

// subscribed notes whether the client is subscribed, for CLIENT LIST.
func (cs *redisConnState) subscribed(on bool) {
	cs.about.sub = on
	cs.publish()
}

// hello answers HELLO as redis-server 7.0 does: AUTH first, then
// SETNAME, then the protocol, and the map of what the server is, in the
// protocol now spoken; authed says whether the client had authenticated
// before. It reports whether HELLO's AUTH authenticated it.
func (cs *redisConnState) hello(p *pool, r *redisRequest, authed bool) bool {
	h, bad := redis.ParseHello(&r.req)
	if bad != nil {
		r.local = append(r.local, bad...)
		return false
	}
	now := false
	if h.Auth {
		req := redis.Request{Args: [][]byte{[]byte("AUTH"), h.User, h.Pass}}
		refusal, ok := redis.AppendAuth(nil, &req, p.cfg.clientPassword())
		if !ok {
			r.local = append(r.local, refusal...)
			return false
		}
		now = true
	}
	if !authed && !now {
		r.local = redis.AppendError(r.local, "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return false
	}
	if h.SetName && !redis.ValidClientName(h.Name) {
		r.local = append(r.local, redis.BadClientName...)
		return now
	}
	if h.SetName {
		cs.about.name = string(h.Name)
	}
	if h.Proto != 0 {
		cs.proto, cs.about.proto = h.Proto, h.Proto
	}
	cs.publish()
	r.local = cs.appendHelloMap(r.local, p)
	return now
}

// redisHanded is what a client's connection commands set, carried to the
// process its connection is handed to (see client.connState): the
// protocol it speaks, whether it authenticated, and what it said of
// itself. JSON, so that a process reads what an older or newer one wrote,
// a field it does not know left out.
type redisHanded struct {
	Proto   redis.Proto `json:"proto,omitempty"`
	Authed  bool        `json:"authed,omitempty"`
	Name    string      `json:"name,omitempty"`
	LibName string      `json:"lib_name,omitempty"`
	LibVer  string      `json:"lib_ver,omitempty"`
}

// handedTo returns the connection's state for the process it is handed
// to, nil when it is a new connection's; authed says that the client gave
// the pool's password.
func (cs *redisConnState) handedTo(authed bool) []byte {
	h := redisHanded{Authed: authed, Name: cs.about.name, LibName: cs.about.libName, LibVer: cs.about.libVer}
	if cs.proto != redis.RESP2 {
		h.Proto = cs.proto
	}
	if h == (redisHanded{}) {
		return nil
	}
	b, _ := json.Marshal(h)
	return b
}

// handedFrom takes the state of a connection handed over from another
// process (handedTo's), and reports whether the client had authenticated
// there. A state that cannot be read leaves a new connection's.
func (cs *redisConnState) handedFrom(state []byte) (authed bool) {
	var h redisHanded
	if json.Unmarshal(state, &h) != nil {
		return false
	}
	if h.Proto == redis.RESP3 {
		cs.proto, cs.about.proto = h.Proto, h.Proto
	}
	cs.about.name, cs.about.libName, cs.about.libVer = h.Name, h.LibName, h.LibVer
	cs.publish()
	return h.Authed
}

// appendHelloMap appends HELLO's map: the proxy says it is a Redis of
// helloVersion, standalone (a cluster when p answers cluster clients), a
// master, with no modules.
func (cs *redisConnState) appendHelloMap(dst []byte, p *pool) []byte {
	mode := "standalone"
	if p.cfg.RedisCluster.Enabled {
		mode = "cluster"
	}
	dst = redis.AppendMapHeader(dst, 7, cs.proto)
	for _, kv := range [][2]string{{"server", "redis"}, {"version", helloVersion}} {
		dst = redis.AppendBulkString(redis.AppendBulkString(dst, kv[0]), kv[1])
	}
	dst = redis.AppendInt(redis.AppendBulkString(dst, "proto"), int64(cs.proto))
	dst = redis.AppendInt(redis.AppendBulkString(dst, "id"), int64(cs.c.id))
	for _, kv := range [][2]string{{"mode", mode}, {"role", "master"}} {
		dst = redis.AppendBulkString(redis.AppendBulkString(dst, kv[0]), kv[1])
	}
	return redis.AppendArrayHeader(redis.AppendBulkString(dst, "modules"), 0)
}

// command answers CLIENT for the client's connection to the proxy: ID,
// SETNAME, GETNAME, SETINFO, INFO, LIST (the clients of the same
// listener), REPLY ON, and HELP. The subcommands that act on other
// clients or on a server's view of this one (KILL, PAUSE, UNPAUSE,
// UNBLOCK, TRACKING, CACHING, GETREDIR, TRACKINGINFO, NO-EVICT, NO-TOUCH,
// REPLY OFF|SKIP) are refused: through a proxy the server's clients are
// the proxy's connections, shared by many clients.
func (cs *redisConnState) command(dst []byte, args [][]byte) []byte {
	sub := strings.ToLower(string(args[1]))
	n := len(args)
	switch {
	case sub == "id" && n == 2:
		return redis.AppendInt(dst, int64(cs.c.id))
	case sub == "setname" && n == 3:
		if !redis.ValidClientName(args[2]) {
			return append(dst, redis.BadClientName...)
		}
		cs.about.name = string(args[2])
		cs.publish()
		return redis.AppendOK(dst)
	case sub == "getname" && n == 2 && cs.about.name == "":
		return redis.AppendNull(dst, cs.proto)
	case sub == "getname" && n == 2:
		return redis.AppendBulkString(dst, cs.about.name)
	case sub == "setinfo" && n == 4:
		return cs.setInfo(dst, args[2], args[3])
	case sub == "info" && n == 2:
		return redis.AppendVerbatim(dst, listLine(cs.c, time.Now())+"\n", cs.proto)
	case sub == "list":
		return cs.list(dst, args[2:])
	case sub == "reply" && n == 3 && bytes.EqualFold(args[2], []byte("on")):
		return redis.AppendOK(dst)
	case sub == "help" && n == 2:
		dst = redis.AppendArrayHeader(dst, len(clientHelp))
		for _, l := range clientHelp {
			dst = redis.AppendSimpleString(dst, l)
		}
		return dst
	case clientRefused[sub]:
		return redis.AppendError(dst, "ERR 'client|"+sub+"' is not supported by the proxy: connection state")
	}
	return redis.AppendError(dst, "ERR unknown subcommand or wrong number of arguments for '"+string(args[1])+"'. Try CLIENT HELP.")
}

// clientRefused are the CLIENT subcommands the proxy refuses (see
// redisConnState.command).
var clientRefused = map[string]bool{
	"kill": true, "pause": true, "unpause": true, "unblock": true, "tracking": true, "caching": true,
	"getredir": true, "trackinginfo": true, "no-evict": true, "no-touch": true, "reply": true,
}

var clientHelp = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands the proxy answers:",
	"ID", "    Return the ID of the current connection.",
	"GETNAME", "    Return the name of the current connection.",
	"SETNAME <name>", "    Assign the name <name> to the current connection.",
	"SETINFO <LIB-NAME|LIB-VER> <value>", "    Set the client's library name or version.",
	"INFO", "    Return information about the current client connection.",
	"LIST [TYPE NORMAL|PUBSUB] [ID <id> ...]", "    Return information about the clients of this proxy's pool.",
	"REPLY ON", "    Reply to each command (the only mode the proxy serves).",
	"HELP", "    Print this help.",
}

// setInfo answers CLIENT SETINFO LIB-NAME|LIB-VER value as redis-server
// 7.2 does (7.0 does not have it; clients ignore its error, and a proxy
// that knows the library is worth more).
func (cs *redisConnState) setInfo(dst, attr, value []byte) []byte {
	a := strings.ToLower(string(attr))
	switch {
	case a != "lib-name" && a != "lib-ver":
		return redis.AppendError(dst, "ERR Unrecognized option '"+string(attr)+"'")
	case !redis.ValidClientName(value):
		return redis.AppendError(dst, "ERR "+a+" cannot contain spaces, newlines or special characters.")
	case a == "lib-name":
		cs.about.libName = string(value)
	default:
		cs.about.libVer = string(value)
	}
	cs.publish()
	return redis.AppendOK(dst)
}

// list answers CLIENT LIST [TYPE normal|pubsub|master|replica] [ID id
// ...] with a line for each client of the pool's listener, as redis-server
// writes them for its own clients (see listLine).
func (cs *redisConnState) list(dst []byte, opts [][]byte) []byte {
	var typ string
	var ids map[uint64]bool
	for i := 0; i < len(opts); i++ {
		switch o := strings.ToLower(string(opts[i])); {
		case o == "type" && i+1 < len(opts):
			typ = strings.ToLower(string(opts[i+1]))
			if typ != "normal" && typ != "pubsub" && typ != "master" && typ != "replica" && typ != "slave" {
				return redis.AppendError(dst, "ERR Unknown client type '"+string(opts[i+1])+"'")
			}
			i++
		case o == "id" && i+1 < len(opts):
			ids = map[uint64]bool{}
			for i++; i < len(opts); i++ {
				id, err := strconv.ParseUint(string(opts[i]), 10, 64)
				if err != nil || id == 0 {
					return redis.AppendError(dst, "ERR Invalid client ID")
				}
				ids[id] = true
			}
		default:
			return redis.AppendError(dst, "ERR syntax error")
		}
	}
	peers := []*client{cs.c}
	if cs.c.peers != nil {
		peers = cs.c.peers()
	}
	var b strings.Builder
	now := time.Now()
	for _, o := range peers {
		a, ok := o.about.Load().(*redisAbout)
		switch {
		case !ok, ids != nil && !ids[o.id], typ == "pubsub" && !a.sub, typ == "normal" && a.sub,
			typ == "master", typ == "replica", typ == "slave":
			continue
		}
		b.WriteString(listLine(o, now))
		b.WriteByte('\n')
	}
	return redis.AppendVerbatim(dst, b.String(), cs.proto)
}

// listLine is a client's line of CLIENT LIST and CLIENT INFO, in
// redis-server's fields; those only a server knows of a client (its
// buffers, its database's memory) are 0, the database 0, the last
// command, which the proxy does not track, "NULL".
func listLine(c *client, now time.Time) string {
	a, ok := c.about.Load().(*redisAbout)
	if !ok {
		a = &redisAbout{proto: redis.RESP2, since: now}
	}
	flags := "N"
	if a.sub {
		flags = "P"
	}
	addr, laddr := c.conn.RemoteAddr().String(), c.conn.LocalAddr().String()
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=-1 name=%s age=%d idle=0 flags=%s db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=NULL user=default redir=-1 resp=%d lib-name=%s lib-ver=%s",
		c.id, addr, laddr, a.name, int64(now.Sub(a.since).Seconds()), flags, a.proto, a.libName, a.libVer)
}
