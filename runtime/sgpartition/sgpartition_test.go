package sgpartition

import (
	"encoding/hex"
	"fmt"
	"math"
	"testing"
)

func TestMurmur2MatchesJava(t *testing.T) {
	if len(javaVectors) < 40 {
		t.Fatalf("only %d vectors; expected the full generated table", len(javaVectors))
	}
	for _, v := range javaVectors {
		key, err := hex.DecodeString(v.keyHex)
		if err != nil {
			t.Fatalf("bad vector %q: %v", v.keyHex, err)
		}
		if got := Murmur2(key); got != v.murmur2 {
			t.Errorf("Murmur2(%s) = %d, Java says %d", v.keyHex, got, v.murmur2)
		}
		if got := ToPositive(Murmur2(key)); got != v.positive {
			t.Errorf("ToPositive(Murmur2(%s)) = %d, Java says %d", v.keyHex, got, v.positive)
		}
		for i, n := range javaPartitionCounts {
			if got := Partition(key, n); got != v.partitions[i] {
				t.Errorf("Partition(%s, %d) = %d, Java says %d", v.keyHex, n, got, v.partitions[i])
			}
		}
	}
}

func TestMurmur2NilEqualsEmpty(t *testing.T) {
	// A nil slice is an empty key here; callers must handle Kafka's null key themselves.
	if Murmur2(nil) != Murmur2([]byte{}) {
		t.Fatal("nil and empty keys hash differently")
	}
}

func TestToPositive(t *testing.T) {
	cases := map[int32]int32{
		0:             0,
		1:             1,
		-1:            math.MaxInt32,
		math.MaxInt32: math.MaxInt32,
		math.MinInt32: 0, // Java's Math.abs would overflow here; toPositive does not
		-1563381124:   584102524,
	}
	for in, want := range cases {
		if got := ToPositive(in); got != want {
			t.Errorf("ToPositive(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestPartitionPanicsOnNoPartitions(t *testing.T) {
	for _, n := range []int32{0, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Partition(key, %d) did not panic", n)
				}
			}()
			Partition([]byte("k"), n)
		}()
	}
}

func BenchmarkMurmur2(b *testing.B) {
	for _, size := range []int{8, 36, 256} {
		key := make([]byte, size)
		for i := range key {
			key[i] = byte(i * 31)
		}
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				Murmur2(key)
			}
		})
	}
}
