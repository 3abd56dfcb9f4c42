package mover

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// Big keys. MIGRATE serialises a key whole, and the source serves nothing
// else until the target has restored it: a hash of 100 MB stops its server
// for most of a second. So with [Config.BigElements] set, the scanner asks
// MEMORY USAGE of every moving key, pipelined with its SCANs as the
// sample's sizes are, weighing up to BigElements of its elements (SAMPLES
// BigElements: a collection of at most that many is weighed whole; by
// default five are sampled, which took a hash of 200 fields, one of 2 MB,
// for 10 kB, and MIGRATE sent it whole; weighing a hash of 1000 fields
// took the server 39 µs against 2 µs for five, where its MIGRATE took
// 3.5 ms, and a string costs the same either way), and a key that may be over the
// bounds - more bytes than BigBytes, or than 16 a element for
// BigElements, the least a collection whose MIGRATE costs by the element
// takes (a hashtable's, a skiplist's, a quicklist's; a listpack or an
// intset is sent as one blob) - goes in a batch of its own, whose MIGRATE
// runs inside a script that sizes it exactly first - TYPE and the
// collection's length, O(1), and MEMORY USAGE of every element for one
// of at most BigElements (SAMPLES 0: five sampled missed a 2 MB field
// among 999 small ones, and MIGRATE sent it whole; a walk of 1000
// elements costs tens of microseconds) - and migrates it only when it is
// under the bounds; it answers
// the others, which [Plan.Big] moves piece by piece (see [Copy]). The
// exact size is asked in the script, with the key's MIGRATE, so that no
// write between the question and the move changes the answer; the script
// costs some microseconds a key, which every key paying for it cut the
// mover's pace by two thirds, hence the question first. Measured on the 2-core machine of the tests (redis-server 7.0,
// localhost), MIGRATE of a hash of 10,000 fields of 100 bytes (1.6 MB)
// held its source 73 ms, of 100,000 such (15 MB) 503 ms, of 1,000 fields
// of 1 KB 5 ms; of a sorted set of 100,000 members 136 ms: the cost goes
// with the elements more than the bytes, some 5 µs an element. Hence two
// bounds: elements, and bytes for a string or large elements.

// probeScript sizes KEYS and migrates those under the bound with the
// MIGRATE whose arguments, up to KEYS, follow ARGV[1] (elements) and
// ARGV[2] (bytes). It answers the number of keys migrated, then the big
// keys. A stream with consumer groups is never big: its groups' pending
// entries cannot be copied by reading it, and MIGRATE moves them.
const probeScript = `
local elems, bytes = tonumber(ARGV[1]), tonumber(ARGV[2])
local small, out = {}, {0}
local lens = {hash='HLEN', set='SCARD', zset='ZCARD', list='LLEN', stream='XLEN'}
for _, k in ipairs(KEYS) do
  local t = redis.call('TYPE', k).ok
  if t ~= 'none' then
    local big = false
    if t == 'string' then
      big = redis.call('STRLEN', k) > bytes
    elseif lens[t] then
      local n = redis.call(lens[t], k)
      big = n > elems or (n > 1 and (redis.call('MEMORY', 'USAGE', k, 'SAMPLES', 0) or 0) > bytes)
      if big and t == 'stream' then
        local info = redis.call('XINFO', 'STREAM', k)
        for i = 1, #info, 2 do
          if info[i] == 'groups' and info[i+1] > 0 then big = false end
        end
      end
    end
    if big then out[#out+1] = k else small[#small+1] = k end
  end
end
out[1] = #small
for i = 1, #small, 4000 do
  local args = {}
  for j = 3, #ARGV do args[#args+1] = ARGV[j] end
  for j = i, math.min(i+3999, #small) do args[#args+1] = small[j] end
  redis.call(unpack(args))
end
return out
`

// AppendMigrate appends to req the command that migrates keys with the
// MIGRATE whose arguments are migrate (up to, and without, KEYS): that
// MIGRATE itself when elements is 0, else the script that leaves out the
// keys over elements elements or bytes bytes (see above). Its reply is
// read by [ParseMigrate].
func AppendMigrate(req []byte, migrate [][]byte, keys [][]byte, elements, bytes int64) []byte {
	if elements <= 0 {
		args := append(append(make([][]byte, 0, len(migrate)+1+len(keys)), migrate...), []byte("KEYS"))
		return redis.AppendArgs(req, append(args, keys...))
	}
	args := make([][]byte, 0, 5+len(keys)+len(migrate))
	args = append(args, []byte("EVAL"), []byte(probeScript), strconv.AppendInt(nil, int64(len(keys)), 10))
	args = append(args, keys...)
	args = append(args, strconv.AppendInt(nil, elements, 10), strconv.AppendInt(nil, bytes, 10))
	args = append(append(args, migrate...), []byte("KEYS"))
	return redis.AppendArgs(req, args)
}

// ParseMigrate reads the reply to [AppendMigrate]'s command: how many of
// the keys moved (for a plain MIGRATE, all or, NOKEY, none: n is then
// the number asked, or 0), and the big ones, which did not. An error
// reply is a [ServerError]; anything else wraps redis.ErrBadReply.
func ParseMigrate(reply []byte, asked int) (moved int, big [][]byte, err error) {
	switch {
	case bytes.Equal(reply, []byte("+OK\r\n")):
		return asked, nil, nil
	case bytes.Equal(reply, []byte("+NOKEY\r\n")):
		return 0, nil, nil
	case redis.IsError(reply):
		return 0, nil, replyError("MIGRATE", reply)
	}
	// The script's reply: *<n>\r\n:<moved>\r\n then n-1 bulk strings.
	i := bytes.Index(reply, []byte("\r\n"))
	n, err := strconv.Atoi(string(reply[1:max(i, 1)]))
	if i < 0 || reply[0] != '*' || err != nil || n < 1 {
		return 0, nil, fmt.Errorf("%w: %q to MIGRATE", redis.ErrBadReply, reply)
	}
	rest := reply[i+2:]
	j := bytes.Index(rest, []byte("\r\n"))
	if j < 1 || rest[0] != ':' {
		return 0, nil, fmt.Errorf("%w: %q to MIGRATE", redis.ErrBadReply, reply)
	}
	if moved, err = strconv.Atoi(string(rest[1:j])); err != nil {
		return 0, nil, fmt.Errorf("%w: %q to MIGRATE", redis.ErrBadReply, reply)
	}
	// The big keys are a SCAN reply's keys, without its cursor.
	keys := append([]byte("*2\r\n$1\r\n0\r\n*"+strconv.Itoa(n-1)+"\r\n"), rest[j+2:]...)
	if _, big, err = redis.ParseScan(keys); err != nil {
		return 0, nil, fmt.Errorf("%w: %q to MIGRATE", redis.ErrBadReply, reply)
	}
	return moved, big, nil
}
