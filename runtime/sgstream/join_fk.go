package sgstream

func joinForeignKey[K, V1, KO, V2, VR any](l Table[K, V1], r Table[KO, V2], name string, kind JoinKind, fk func(V1) KO, joiner func(K, V1, V2) VR, store string, sd ForeignKeySerdes[K, V1, KO, VR]) Table[K, VR] {
	panic("streamgen: JoinForeignKey: not implemented yet")
}
