package proxy

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clientHandover sends clients' connections to the process at the other
// end of conn.
type clientHandover struct {
	// mu keeps one connection's message whole.
	mu   sync.Mutex
	conn *net.UnixConn
}

// maxHandoverKey bounds the listening socket's name, with the
// connection's state, in a handed-over connection's message.
const maxHandoverKey = 4096

// send hands c's connection, with unread and its state, to the other
// process, and reports whether it did; if not, the caller closes the
// connection, as a drain does.
//
// The state follows the socket's name after a NUL, which no name holds,
// rather than in a field of its own: a process that knows no state, an
// older one, finds no socket of that name and closes the connection,
// rather than serve it as new (a RESP3 client with RESP2 replies, one that
// authenticated refused with -NOAUTH); one that knows it reads none from
// an older one; and a connection of a new connection's state goes as
// before either way.
func (h *clientHandover) send(c *client, unread []byte) bool {
	key := c.listenKey
	if len(c.connState) > 0 {
		key += "\x00" + string(c.connState)
	}
	if len(key) > maxHandoverKey {
		return false
	}
	fc, ok := c.conn.(interface{ File() (*os.File, error) })
	if !ok {
		return false
	}
	f, err := fc.File()
	if err != nil {
		return false
	}
	defer f.Close()
	msg := binary.BigEndian.AppendUint32(nil, uint32(len(key)))
	msg = binary.BigEndian.AppendUint32(msg, uint32(len(unread)))
	msg = append(append(msg, key...), unread...)
	h.mu.Lock()
	defer h.mu.Unlock()
	_ = h.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	n, _, err := h.conn.WriteMsgUnix(msg, syscall.UnixRights(int(f.Fd())), nil)
	return err == nil && n == len(msg)
}

// receiveHandover reads one handed-over connection from conn: the file of
// its descriptor, the listening socket's name, the connection's state and
// what it sent unread.
func receiveHandover(conn *net.UnixConn) (*os.File, string, []byte, []byte, error) {
	var head [8]byte
	oob := make([]byte, syscall.CmsgSpace(4))
	n, oobn, _, _, err := conn.ReadMsgUnix(head[:], oob)
	if err != nil {
		return nil, "", nil, nil, err
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, "", nil, nil, fmt.Errorf("handover: a connection without its descriptor (%v)", err)
	}
	fds, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, "", nil, nil, fmt.Errorf("handover: %d descriptors (%v)", len(fds), err)
	}
	f := os.NewFile(uintptr(fds[0]), "handed-over client")
	if _, err := io.ReadFull(conn, head[n:]); err != nil {
		f.Close()
		return nil, "", nil, nil, err
	}
	keyLen, unreadLen := binary.BigEndian.Uint32(head[:4]), binary.BigEndian.Uint32(head[4:])
	if keyLen > maxHandoverKey || unreadLen > 1<<30 {
		f.Close()
		return nil, "", nil, nil, fmt.Errorf("handover: a message of %d and %d bytes", keyLen, unreadLen)
	}
	rest := make([]byte, int(keyLen)+int(unreadLen))
	if _, err := io.ReadFull(conn, rest); err != nil {
		f.Close()
		return nil, "", nil, nil, err
	}
	key, state, ok := strings.Cut(string(rest[:keyLen]), "\x00")
	if !ok {
		return f, key, nil, rest[keyLen:], nil
	}
	return f, key, []byte(state), rest[keyLen:], nil
}
