package memcache

// MaxKeyLen is the longest key memcached accepts, in bytes.
const MaxKeyLen = 250

// Limits bound what a [Reader] accepts. Zero fields mean the defaults.
type Limits struct {
	// MaxValue is the largest data block, in bytes. Default 1 GiB, the
	// largest item memcached can be set to store (-I 1024m).
	MaxValue int
	// MaxLine is the longest command line, in bytes. Default 1 MiB: room
	// for a get of 4096 keys of the longest length, since clients such as
	// libmemcached's send a multi-get of thousands of keys as one line.
	// Only a connection that sends such a line holds a buffer that big.
	MaxLine int
	// MaxKeys is the most keys in one retrieval; 0 means no limit, as
	// memcached sets none.
	MaxKeys int
	// Budget, when not nil, is asked for room before the Reader holds a
	// data block, or a line longer than its buffer.
	Budget Budget
}

// Budget bounds what a [Reader] or a [ReplyReader] holds in memory.
type Budget interface {
	// Reserve is called with the size of a data block (of a request, or
	// of a value in a reply), or of a part of a long line, before it is
	// read into memory; an error refuses it, and the block is read and
	// dropped.
	Reserve(n int) error
}

// Default limits.
const (
	DefaultMaxValue = 1 << 30
	DefaultMaxLine  = 1 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxValue <= 0 {
		l.MaxValue = DefaultMaxValue
	}
	if l.MaxLine <= 0 {
		l.MaxLine = DefaultMaxLine
	}
	return l
}
