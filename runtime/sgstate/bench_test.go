package sgstate

import (
	"encoding/binary"
	"testing"
)

// Benchmarks commit every 1000 writes, roughly an exactly-once commit
// interval's worth at modest rates, so staging and commit costs are included.

func benchKey(buf []byte, i int) []byte {
	return binary.BigEndian.AppendUint64(append(buf[:0], "user-"...), uint64(i)*0x9E3779B97F4A7C15)
}

func benchVariants(b *testing.B) []variant {
	return variants()
}

func BenchmarkKVPut(b *testing.B) {
	for _, v := range benchVariants(b) {
		b.Run(v.name, func(b *testing.B) {
			s, _ := openStore(b, v.kv("kv"))
			val := make([]byte, 100)
			var kb []byte
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				kb = benchKey(kb, i)
				if err := s.Put(kb, val); err != nil {
					b.Fatal(err)
				}
				if i%1000 == 999 {
					if err := s.(Transactional).Commit(nil); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func BenchmarkKVGet(b *testing.B) {
	const n = 100_000
	for _, v := range benchVariants(b) {
		b.Run(v.name, func(b *testing.B) {
			s, _ := openStore(b, v.kv("kv"))
			val := make([]byte, 100)
			var kb []byte
			for i := 0; i < n; i++ {
				kb = benchKey(kb, i)
				mustNoErr(b, s.Put(kb, val))
			}
			mustNoErr(b, s.(Transactional).Commit(nil))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				kb = benchKey(kb, i%n)
				if _, ok, err := s.Get(kb); err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

func BenchmarkWindowPut(b *testing.B) {
	for _, v := range benchVariants(b) {
		b.Run(v.name, func(b *testing.B) {
			s, _ := openStore(b, v.window("w", WindowOptions{Retention: 60_000, RetainDuplicates: true}))
			val := make([]byte, 100)
			var kb []byte
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				kb = benchKey(kb, i%1000)
				// 10 records per ms, so retention expires old segments.
				if err := s.Put(kb, int64(i/10), val); err != nil {
					b.Fatal(err)
				}
				if i%1000 == 999 {
					if err := s.(Transactional).Commit(nil); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkWindowFetch is a join lookup: one key's entries within ±100 ms
// in a store of 1000 keys × 100 timestamps.
func BenchmarkWindowFetch(b *testing.B) {
	for _, v := range benchVariants(b) {
		b.Run(v.name, func(b *testing.B) {
			s, _ := openStore(b, v.window("w", WindowOptions{Retention: 1_000_000}))
			val := make([]byte, 100)
			var kb []byte
			for ts := 0; ts < 100; ts++ {
				for k := 0; k < 1000; k++ {
					kb = benchKey(kb, k)
					mustNoErr(b, s.Put(kb, int64(ts*10), val))
				}
				mustNoErr(b, s.(Transactional).Commit(nil))
			}
			b.ReportAllocs()
			b.ResetTimer()
			found := 0
			for i := 0; i < b.N; i++ {
				kb = benchKey(kb, i%1000)
				t := int64(i%900) + 50
				err := s.Fetch(kb, t-100, t+100, func(int64, []byte) error { found++; return nil })
				if err != nil {
					b.Fatal(err)
				}
			}
			if found == 0 {
				b.Fatal("nothing found")
			}
		})
	}
}

func BenchmarkCachePut(b *testing.B) {
	c := NewCache(10 << 20)
	nc := c.Namespace("s", func([]byte) ([]byte, bool, error) { return nil, false, nil }, func(FlushEntry) error { return nil })
	val := make([]byte, 100)
	var kb []byte
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		kb = benchKey(kb, i%10_000)
		if err := nc.Put(kb, val, int64(i), nil); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			mustNoErr(b, c.Flush())
		}
	}
}
