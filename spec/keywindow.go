package spec

import "time"

// Windowed keys chosen by a step: map, flat_map, select_key, group_by (of a
// stream or a table) and process may declare `key: windowed<K>` or
// `key: session_windowed<K>`, as Kafka Streams code builds a new
// Windowed<K> (TopArticles re-groups a windowed count under a windowed
// industry key). On a topic such a key has Kafka Streams' layout
// (TimeWindowedSerializer: key bytes and the 8-byte start;
// SessionWindowedSerializer: key bytes, end and start), and a time-windowed
// key decodes its end from a window size, as TimeWindowedDeserializer does.

// keyType reads a step's output key type, which may be windowed.
func (s *step) keyType(o *obj, required bool) *Type {
	return s.typeOf(o, "key", required, true)
}

// keyWindow resolves the window the windowed key of n (set by the step's
// `key:`) decodes with, after the step replaced the key. A time-windowed
// key keeps the size of the input's time-windowed key, or takes the step's
// window_size (Kafka's TimeWindowedSerde(inner, windowSize)); a
// session-windowed key carries its end, so it needs none.
func (s *step) keyWindow(o *obj, n *Node) {
	var size time.Duration
	hasSize := false
	if o != nil && o.has("window_size") {
		size, hasSize = o.dur("window_size")
		if hasSize && size <= 0 {
			s.errf(o.valPos("window_size"), "window_size must be positive")
			hasSize = false
		}
	}
	k := n.Key
	switch {
	case k == nil:
	case k.Kind == KindSessionWindowed:
		if o != nil && o.has("window_size") {
			s.errf(o.keyPos("window_size"), "window_size is only for a windowed<K> key: a session-windowed key carries its end")
		}
		n.WindowedKey, n.KeyWindow = true, &Window{Pos: s.pos, Kind: WindowSession}
	case k.Kind == KindWindowed && hasSize:
		n.WindowedKey, n.KeyWindow = true, &Window{Pos: o.valPos("window_size"), Kind: WindowTumbling, Size: size, Advance: size}
	case k.Kind == KindWindowed:
		if w := inputKeyWindow(s.in); w != nil && w.Kind != WindowSession {
			n.WindowedKey, n.KeyWindow = true, w
			return
		}
		if !s.inBad && !(o != nil && o.has("window_size")) {
			pos := s.pos
			if o != nil && o.has("key") {
				pos = o.valPos("key")
			}
			s.errf(pos, "key %q needs window_size: the input has no time-windowed key whose window size it could keep", k)
			s.p.hintf("add `window_size: <duration>` (e.g. 1h), the size Kafka Streams' TimeWindowedSerde is given;\na windowed key on a topic stores only the window start, and the end is start + window_size")
		}
	case o != nil && o.has("window_size"):
		s.errf(o.keyPos("window_size"), "window_size is only for a windowed<K> key, not %q", k)
	}
}

// inputKeyWindow is the window of in's windowed key: the one a re-keying
// step gave it, or the windowed aggregation's.
func inputKeyWindow(in *Node) *Window {
	if in == nil || !hasWindowed(in.Key) {
		return nil
	}
	if in.KeyWindow != nil {
		return in.KeyWindow
	}
	return in.Window
}
