package memcache

import (
	"strconv"
)

// AppendRequest appends req as a server should receive it and returns the
// extended slice. A retrieval is written with all its keys; use
// [AppendRetrieval] for a subset. noreply and the meta q flag are never
// written, so that every request gets exactly one reply from the server.
func AppendRequest(dst []byte, req *Request) []byte {
	if req.Cmd.IsStorage() {
		dst = AppendHead(dst, req)
		dst = append(dst, req.Data...)
		return append(dst, "\r\n"...)
	}
	return appendOther(dst, req)
}

// AppendHead appends req as [AppendRequest] does, but for a storage
// request (set, ..., ms) only its command line with its \r\n: the caller
// writes the data block and "\r\n" after it, so that a large value need
// not be copied.
func AppendHead(dst []byte, req *Request) []byte {
	switch {
	case req.Cmd == CmdMetaSet:
		dst = append(dst, "ms "...)
		dst = append(dst, req.Keys[0]...)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(len(req.Data)), 10)
		return append(appendArgs(dst, req.Args), "\r\n"...)
	case req.Cmd.IsStorage():
		dst = append(dst, req.Cmd.String()...)
		dst = append(dst, ' ')
		dst = append(dst, req.Keys[0]...)
		dst = append(dst, ' ')
		dst = strconv.AppendUint(dst, uint64(req.Flags), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, req.Exptime, 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(len(req.Data)), 10)
		if req.Cmd == CmdCas {
			dst = append(dst, ' ')
			dst = strconv.AppendUint(dst, req.Cas, 10)
		}
		return append(dst, "\r\n"...)
	}
	return appendOther(dst, req)
}

// appendOther appends a request that is neither a storage request nor a
// retrieval.
func appendOther(dst []byte, req *Request) []byte {
	if req.Cmd.IsRetrieval() {
		return AppendRetrieval(dst, req.Cmd, req.Exptime, req.Keys)
	}
	dst = append(dst, req.Cmd.String()...)
	if len(req.Keys) > 0 {
		dst = append(dst, ' ')
		dst = append(dst, req.Keys[0]...)
	}
	switch req.Cmd {
	case CmdIncr, CmdDecr:
		dst = append(dst, ' ')
		dst = strconv.AppendUint(dst, req.Delta, 10)
	case CmdTouch:
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, req.Exptime, 10)
	}
	dst = appendArgs(dst, req.Args)
	return append(dst, "\r\n"...)
}

// AppendRetrieval appends a get, gets, gat or gats of keys (gat and gats
// with exptime) and returns the extended slice.
func AppendRetrieval(dst []byte, cmd Command, exptime int64, keys [][]byte) []byte {
	dst = append(dst, cmd.String()...)
	if cmd == CmdGat || cmd == CmdGats {
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, exptime, 10)
	}
	for _, k := range keys {
		dst = append(dst, ' ')
		dst = append(dst, k...)
	}
	return append(dst, "\r\n"...)
}

func appendArgs(dst []byte, args [][]byte) []byte {
	for _, a := range args {
		dst = append(dst, ' ')
		dst = append(dst, a...)
	}
	return dst
}

func appendData(dst, data []byte) []byte {
	dst = append(dst, "\r\n"...)
	dst = append(dst, data...)
	return append(dst, "\r\n"...)
}

// Quiet reports whether reply is one the client asked not to see: with the
// meta q flag, a miss of mg ("EN") and a success of ms, md or ma ("HD"),
// as memcached 1.6 itself suppresses them (a test compares with the real
// server: md's "NF" is still sent); with noreply on a classic command,
// every reply.
func Quiet(req *Request, reply []byte) bool {
	if !req.Noreply {
		return false
	}
	if !req.Cmd.IsMeta() {
		return true
	}
	code := ""
	if len(reply) >= 2 {
		code = string(reply[:2])
	}
	switch req.Cmd {
	case CmdMetaGet:
		return code == "EN"
	case CmdMetaSet, CmdMetaArithmetic, CmdMetaDelete:
		return code == "HD"
	}
	return false
}

// AppendValue appends a VALUE entry of a retrieval reply ("VALUE key flags
// bytes [cas]\r\ndata\r\n"); withCas writes the cas field.
func AppendValue(dst, key []byte, flags uint32, data []byte, cas uint64, withCas bool) []byte {
	dst = append(dst, "VALUE "...)
	dst = append(dst, key...)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, uint64(flags), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(len(data)), 10)
	if withCas {
		dst = append(dst, ' ')
		dst = strconv.AppendUint(dst, cas, 10)
	}
	return appendData(dst, data)
}

// AppendStat appends one "STAT name value" line of a stats reply.
func AppendStat(dst []byte, name string, value uint64) []byte {
	dst = append(dst, "STAT "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, value, 10)
	return append(dst, "\r\n"...)
}
