package sgstream

import "github.com/streamgen/streamgen/serdes"

func joinStreamTable[K, V1, V2, VR any](s Stream[K, V1], t Table[K, V2], name string, kind JoinKind, joiner func(K, V1, V2) VR) Stream[K, VR] {
	panic("streamgen: JoinStreamTable: not implemented yet")
}

func joinStreamGlobal[K, V1, K2, V2, VR any](s Stream[K, V1], g GlobalTable[K2, V2], name string, kind JoinKind, keyMapper func(K, V1) K2, joiner func(K, V1, V2) VR) Stream[K, VR] {
	panic("streamgen: JoinStreamGlobal: not implemented yet")
}

func joinTables[K, V1, V2, VR any](l Table[K, V1], r Table[K, V2], name string, kind JoinKind, joiner func(K, V1, V2) VR, store string, value serdes.Serde[VR]) Table[K, VR] {
	panic("streamgen: JoinTables: not implemented yet")
}
