package proxy

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
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

// maxHandoverKey bounds the listening socket's name in a handed-over
// connection's message.
const maxHandoverKey = 4096

// send hands c's connection, with unread, to the other process, and
// reports whether it did; if not, the caller closes the connection, as a
// drain does.
func (h *clientHandover) send(c *client, unread []byte) bool {
	fc, ok := c.conn.(interface{ File() (*os.File, error) })
	if !ok {
		return false
	}
	f, err := fc.File()
	if err != nil {
		return false
	}
	defer f.Close()
	msg := binary.BigEndian.AppendUint32(nil, uint32(len(c.listenKey)))
	msg = binary.BigEndian.AppendUint32(msg, uint32(len(unread)))
	msg = append(append(msg, c.listenKey...), unread...)
	h.mu.Lock()
	defer h.mu.Unlock()
	_ = h.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	n, _, err := h.conn.WriteMsgUnix(msg, syscall.UnixRights(int(f.Fd())), nil)
	return err == nil && n == len(msg)
}

// receiveHandover reads one handed-over connection from conn: the file of
// its descriptor, the listening socket's name and what it sent unread.
func receiveHandover(conn *net.UnixConn) (*os.File, string, []byte, error) {
	var head [8]byte
	oob := make([]byte, syscall.CmsgSpace(4))
	n, oobn, _, _, err := conn.ReadMsgUnix(head[:], oob)
	if err != nil {
		return nil, "", nil, err
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, "", nil, fmt.Errorf("handover: a connection without its descriptor (%v)", err)
	}
	fds, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, "", nil, fmt.Errorf("handover: %d descriptors (%v)", len(fds), err)
	}
	f := os.NewFile(uintptr(fds[0]), "handed-over client")
	if _, err := io.ReadFull(conn, head[n:]); err != nil {
		f.Close()
		return nil, "", nil, err
	}
	keyLen, unreadLen := binary.BigEndian.Uint32(head[:4]), binary.BigEndian.Uint32(head[4:])
	if keyLen > maxHandoverKey || unreadLen > 1<<30 {
		f.Close()
		return nil, "", nil, fmt.Errorf("handover: a message of %d and %d bytes", keyLen, unreadLen)
	}
	rest := make([]byte, int(keyLen)+int(unreadLen))
	if _, err := io.ReadFull(conn, rest); err != nil {
		f.Close()
		return nil, "", nil, err
	}
	return f, string(rest[:keyLen]), rest[keyLen:], nil
}
