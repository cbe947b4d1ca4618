package sgstream

func joinStreams[K, V1, V2, VR any](left Stream[K, V1], right Stream[K, V2], name string, kind JoinKind, w JoinWindows, joiner func(K, V1, V2) VR, sd StreamJoinSerdes[K, V1, V2], opts []WindowStoreOpt) Stream[K, VR] {
	panic("streamgen: JoinStreams: not implemented yet")
}
