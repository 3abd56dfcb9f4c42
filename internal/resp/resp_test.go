package resp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Value
		err  error
	}{
		{"+OK\r\n", Value{Kind: '+', Str: "OK"}, nil},
		{":-42\r\n", Value{Kind: ':', Int: -42}, nil},
		{"$5\r\nhe\r\nl\r\n", Value{Kind: '$', Str: "he\r\nl"}, nil},
		{"$-1\r\n", Value{Kind: '$', Nil: true}, nil},
		{"_\r\n", Value{Kind: '$', Nil: true}, nil},
		{"*-1\r\n", Value{Kind: '*', Nil: true}, nil},
		{"*2\r\n$1\r\na\r\n*1\r\n:1\r\n", Value{Kind: '*', Elems: []Value{{Kind: '$', Str: "a"}, {Kind: '*', Elems: []Value{{Kind: ':', Int: 1}}}}}, nil},
		{"-ERR no\r\n", Value{}, Error("ERR no")},
		{"+OK\n", Value{}, ErrProtocol},
		{"?x\r\n", Value{}, ErrProtocol},
		{":x\r\n", Value{}, ErrProtocol},
		{"$2\r\nabc\r\n", Value{}, ErrProtocol},
		{"$-2\r\n", Value{}, ErrProtocol},
		{"$536870913\r\n", Value{}, ErrProtocol},
		{"$536870912\r\nab", Value{}, io.ErrUnexpectedEOF},
		{"*3\r\n:1\r\n", Value{}, io.EOF},
		{strings.Repeat("*1\r\n", 9) + ":1\r\n", Value{}, ErrProtocol},
	} {
		got, err := Read(bufio.NewReader(strings.NewReader(c.in)))
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%q: %v, want %v", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func TestStrings(t *testing.T) {
	v := Value{Kind: '*', Elems: []Value{{Kind: '$', Str: "a"}, {Kind: '+', Str: "b"}}}
	if s, ok := v.Strings(); !ok || !reflect.DeepEqual(s, []string{"a", "b"}) {
		t.Errorf("%v %v", s, ok)
	}
	if _, ok := (Value{Kind: '*', Elems: []Value{{Kind: ':', Int: 1}}}).Strings(); ok {
		t.Error("an integer taken for a string")
	}
	if _, ok := (Value{Kind: '$', Str: "a"}).Strings(); ok {
		t.Error("a bulk string taken for an array")
	}
}

// TestDo: a command goes out as an array of bulk strings and its reply
// comes back.
func TestDo(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		defer b.Close()
		br := bufio.NewReader(b)
		cmd, err := Read(br)
		if err != nil {
			return
		}
		args, _ := cmd.Strings()
		b.Write([]byte("$" + string(rune('0'+len(strings.Join(args, " ")))) + "\r\n" + strings.Join(args, " ") + "\r\n"))
	}()
	v, err := NewConn(a).Do("PING", "x")
	if err != nil || v.Str != "PING x" {
		t.Errorf("Do: %+v, %v", v, err)
	}
}

// FuzzRead: any bytes give values and then an error, never a panic or
// a hang.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "*2\r\n$1\r\na\r\n:1\r\n", "$-1\r\n", "-ERR x\r\n", "_\r\n", "*1\r\n*1\r\n*0\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReader(bytes.NewReader(in))
		for range 100 {
			if _, err := Read(br); err != nil {
				return
			}
		}
	})
}
