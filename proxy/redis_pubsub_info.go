package proxy

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// pubsubInfo answers PUBSUB: its subcommands asked of every server, and
// the answers merged: CHANNELS and SHARDCHANNELS listed once each,
// NUMSUB and SHARDNUMSUB summed by channel, NUMPAT the largest of the
// servers' (a pattern subscribed through the proxy is on every server).
func (c *redisClient) pubsubInfo(p *pool, r *redisRequest) {
	req := &r.req
	if !c.endRound() {
		r.answerError(errClientGone)
		return
	}
	sub := ""
	if len(req.Args) > 1 {
		sub = string(bytes.ToLower(req.Args[1]))
	}
	var replies [][]byte
	for _, b := range p.backends {
		ctx, cancel := context.WithTimeout(context.Background(), p.cfg.Timeout)
		got, err := redisAsk(ctx, b, redis.AppendRequest(nil, req), 1)
		cancel()
		if err != nil {
			r.local = redis.AppendError(r.local, "ERR "+err.Error())
			return
		}
		replies = append(replies, got[0])
		if sub != "channels" && sub != "shardchannels" && sub != "numsub" && sub != "shardnumsub" && sub != "numpat" {
			break // HELP, or an error: one server's answer
		}
	}
	merged, err := mergePubSub(sub, replies)
	if err != nil {
		r.answerError(err)
		return
	}
	r.local = append(r.local, merged...)
}

// mergePubSub merges the servers' replies to PUBSUB sub. They are alike
// in RESP2 and RESP3: redis-server 7.0 answers NUMSUB with an array in
// both, not a map.
func mergePubSub(sub string, replies [][]byte) ([]byte, error) {
	if len(replies) == 1 || redis.IsError(replies[0]) {
		return replies[0], nil
	}
	switch sub {
	case "numpat":
		var most int64
		for _, rep := range replies {
			n, ok := redis.Integer(rep)
			if !ok {
				return nil, fmt.Errorf("%w: %q to PUBSUB NUMPAT", redis.ErrBadReply, rep)
			}
			most = max(most, n)
		}
		return redis.AppendInt(nil, most), nil
	case "channels", "shardchannels":
		seen := map[string]bool{}
		var names []string
		for _, rep := range replies {
			_, elems, err := readArray(rep)
			if err != nil {
				return nil, err
			}
			for _, e := range elems {
				if !seen[e] {
					seen[e] = true
					names = append(names, e)
				}
			}
		}
		out := redis.AppendArrayHeader(nil, len(names))
		for _, n := range names {
			out = redis.AppendBulkString(out, n)
		}
		return out, nil
	}
	// NUMSUB, SHARDNUMSUB: channel, count, ... in the order asked.
	var names []string
	sums := map[string]int64{}
	for i, rep := range replies {
		_, elems, err := readArray(rep)
		if err != nil {
			return nil, err
		}
		for j := 0; j+1 < len(elems); j += 2 {
			n, _ := strconv.ParseInt(elems[j+1], 10, 64)
			if i == 0 {
				names = append(names, elems[j])
			}
			sums[elems[j]] += n
		}
	}
	out := redis.AppendArrayHeader(nil, 2*len(names))
	for _, n := range names {
		out = redis.AppendInt(redis.AppendBulkString(out, n), sums[n])
	}
	return out, nil
}

// readArray reads a flat array of bulk strings and integers as strings.
func readArray(reply []byte) ([]byte, []string, error) {
	_, elems, err := redis.NewReplyReader(bytes.NewReader(reply), redis.ReplyLimits{}).Read(nil, nil)
	if err != nil {
		return nil, nil, err
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		el := reply[e.Start:e.End]
		if v, _, ok := redis.Bulk(el); ok {
			out[i] = string(v)
		} else if n, ok := redis.Integer(el); ok {
			out[i] = strconv.FormatInt(n, 10)
		} else {
			return nil, nil, fmt.Errorf("%w: %q in PUBSUB's reply", redis.ErrBadReply, el)
		}
	}
	return reply, out, nil
}
