// Package sgpartition reproduces the partition that Kafka's Java producer picks for a keyed
// record, so that records streamgen writes land exactly where Kafka Streams (and any Java
// producer) would put the same key. Co-partitioning for joins and repartition topics
// depends on this matching bit for bit.
//
// Only the keyed case is covered: Java's default partitioner sends records without a key
// to a "sticky" partition chosen by load, which is not a function of the record and
// needs no reproducing.
package sgpartition

// Murmur2 is Kafka's murmur2 hash (org.apache.kafka.common.utils.Utils.murmur2): the
// 32-bit MurmurHash2 with Kafka's fixed seed 0x9747b28c, reading the data as
// little-endian 4-byte words. It returns Java's signed int so values compare directly
// with Java output.
func Murmur2(data []byte) int32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	n := len(data)
	// Java computes seed ^ length in int arithmetic; the length's low 32 bits are all
	// that can matter for a byte array.
	h := seed ^ uint32(n)
	blocks := n / 4
	for i := 0; i < blocks; i++ {
		b := data[i*4 : i*4+4]
		k := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	// Java masks each tail byte with 0xff before shifting, so the signedness of Java
	// bytes never leaks in; Go bytes are unsigned already.
	tail := data[blocks*4:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	// Java's >>> is a logical shift, which is what >> does on uint32.
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// ToPositive is Kafka's Utils.toPositive: it clears the sign bit. Unlike an absolute
// value it maps math.MinInt32 to 0 rather than overflowing, and it is what Kafka applies
// before the modulo.
func ToPositive(n int32) int32 {
	return n & 0x7fffffff
}

// Partition returns the partition Kafka's default partitioner chooses for a record with
// the serialized key, among numPartitions partitions:
// toPositive(murmur2(key)) % numPartitions. An empty key is hashed like any other
// (Java hashes an empty array too; only a null key is treated differently).
// numPartitions must be positive; Partition panics otherwise, as a topic with no
// partitions is a caller bug that no partition number could answer.
func Partition(key []byte, numPartitions int32) int32 {
	if numPartitions <= 0 {
		panic("streamgen: sgpartition.Partition needs a positive partition count")
	}
	return ToPositive(Murmur2(key)) % numPartitions
}
