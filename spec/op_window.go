package spec

import "time"

// Windows: windowed_by, the window definitions it and cogroup share, and
// suppress, which holds a (windowed) table's results back.

var windowKinds = []string{"tumbling", "hopping", "sliding", "session"}

// windowKeys are the keys of each window kind's mapping.
var windowKeys = map[WindowKind][]string{
	WindowTumbling: {"size", "grace"},
	WindowHopping:  {"size", "advance", "grace"},
	WindowSliding:  {"time_difference", "grace"},
	WindowSession:  {"gap", "grace"},
}

// parseWindow reads one of tumbling/hopping/sliding/session plus retention
// from o.
func (s *step) parseWindow(o *obj, ctx string) *Window {
	kind := s.windowKind(o, ctx)
	if kind == "" {
		return nil
	}
	w := &Window{Pos: o.keyPos(kind), Kind: WindowKind(kind)}
	wctx := s.ctx() + ": " + prefix(ctx) + kind
	wo := s.p.object(o.val(kind), wctx, windowKeys[w.Kind]...)
	if wo == nil {
		s.failed = true
		return nil
	}
	ok := s.windowSpan(w, wo, wctx)
	ok = s.windowRetention(w, o, ctx, ok) && ok
	if !ok {
		s.failed = true
		return nil
	}
	return w
}

// windowKind finds the one window kind o holds, or reports why not.
func (s *step) windowKind(o *obj, ctx string) string {
	var kind string
	for _, k := range windowKinds {
		if o.has(k) {
			if kind != "" {
				s.errf(o.keyPos(k), "%shas both %s and %s, want exactly one window", prefix(ctx), kind, k)
				return ""
			}
			kind = k
		}
	}
	if kind == "" {
		s.errf(s.p.pos(o.n), "%smissing window, want one of tumbling, hopping, sliding or session", prefix(ctx))
	}
	return kind
}

// windowSpan reads the durations of w's kind from wo, which must be
// positive, and grace.
func (s *step) windowSpan(w *Window, wo *obj, wctx string) bool {
	p := s.p
	ok := true
	positive := func(k string) time.Duration {
		if !wo.has(k) {
			wo.missing(k)
			ok = false
			return 0
		}
		d, valid := wo.dur(k)
		if valid && d <= 0 {
			p.errf(wo.valPos(k), "%s: %s: want a positive duration", wctx, k)
			valid = false
		}
		ok = ok && valid
		return d
	}
	w.Grace, _ = wo.dur("grace")
	switch w.Kind {
	case WindowTumbling:
		w.Size = positive("size")
		w.Advance = w.Size
	case WindowHopping:
		w.Size, w.Advance = positive("size"), positive("advance")
		if ok && w.Advance > w.Size {
			p.errf(wo.valPos("advance"), "%s: advance %s is larger than size %s", wctx, fmtDur(w.Advance), fmtDur(w.Size))
			ok = false
		}
	case WindowSliding:
		w.TimeDiff = positive("time_difference")
	case WindowSession:
		w.Gap = positive("gap")
	}
	return ok
}

// windowRetention reads o's retention into w. When the span is valid
// (checkMin), a retention below Kafka Streams' minimum is an error.
func (s *step) windowRetention(w *Window, o *obj, ctx string, checkMin bool) bool {
	r, has := o.dur("retention")
	if !has {
		return true
	}
	w.Retention = r
	if min, what := minRetention(w); checkMin && r < min {
		s.p.errf(o.valPos("retention"), "%s: %sretention %s is smaller than %s (%s)", s.ctx(), prefix(ctx), fmtDur(r), what, fmtDur(min))
		s.p.hintf("omit retention to use the minimum, or raise it to at least %s", fmtDur(min))
		return false
	}
	return true
}

// minRetention is Kafka Streams' minimum (and default) store retention.
func minRetention(w *Window) (time.Duration, string) {
	switch w.Kind {
	case WindowSliding:
		return 2*w.TimeDiff + w.Grace, "twice the time difference plus grace"
	case WindowSession:
		return w.Gap + w.Grace, "gap plus grace"
	}
	return w.Size + w.Grace, "size plus grace"
}

func effectiveRetention(w *Window) time.Duration {
	min, _ := minRetention(w)
	return max(min, w.Retention)
}

func (p *parser) stepWindowedBy(s *step) *Node {
	o := s.obj()
	n := s.newNode()
	if !s.inBad && s.in.Shape == ShapeStream {
		s.errf(s.pos, "windowed_by on an ungrouped stream %q", s.in.Name)
		p.hintf("add group_by_key (or group_by) before windowed_by; see %s#steps", docURL)
	} else {
		s.want(ShapeGroupedStream)
	}
	if o == nil {
		return n
	}
	n.Window = s.parseWindow(o, "")
	n.Shape = ShapeTimeWindowedStream
	if n.Window != nil && n.Window.Kind == WindowSession {
		n.Shape = ShapeSessionWindowedStream
	}
	if e, ok := o.enum("emit", string(EmitOnUpdate), string(EmitOnClose)); ok {
		n.Emit = EmitStrategy(e)
	}
	p.keepKey(n, s.in)
	return n
}

func (p *parser) stepSuppress(s *step) *Node {
	o, n := s.start()
	p.keepKey(n, s.in)
	if o == nil {
		return n
	}
	sup := &Suppress{Pos: s.pos, WhenFull: "shutdown", Name: s.stepName}
	n.Suppress = sup
	if !o.has("until") {
		s.errf(s.pos, "missing required key \"until\", want window_closes or time_limit")
	}
	if u, ok := o.enum("until", "window_closes", "time_limit"); ok {
		sup.Kind = map[string]SuppressKind{"window_closes": SuppressUntilWindowCloses, "time_limit": SuppressUntilTimeLimit}[u]
	}
	if v, ok := o.int("max_records", 0, 1<<62); ok {
		sup.MaxRecords = int(v)
	}
	if v, ok := o.int("max_bytes", 0, 1<<62); ok {
		sup.MaxBytes = v
	}
	if wf, ok := o.enum("when_full", "shutdown", "emit_early"); ok {
		sup.WhenFull = wf
	}
	switch sup.Kind {
	case SuppressUntilTimeLimit:
		if !o.has("time_limit") {
			s.errf(s.pos, "until time_limit needs time_limit")
		} else if d, ok := o.dur("time_limit"); ok {
			sup.TimeLimit = d
		}
	case SuppressUntilWindowCloses:
		if o.has("time_limit") {
			s.errf(o.keyPos("time_limit"), "time_limit is only for until time_limit")
		}
		if sup.WhenFull == "emit_early" {
			s.errf(o.valPos("when_full"), "until window_closes needs when_full shutdown: emitting early would break the final-result guarantee")
		}
		if !s.inBad && s.in.Shape == ShapeTable && (!s.in.WindowedKey || s.in.Window == nil) {
			s.errf(o.valPos("until"), "until window_closes needs a windowed aggregation upstream, but %q is not windowed", s.in.Name)
			p.hintf("suppress until window_closes only applies to the result of count, reduce or aggregate after windowed_by;\nuse until: time_limit for other tables")
		}
	}
	if !s.inBad {
		s.versionedSuppress()
	}
	if s.needName("it names the suppression buffer (and its changelog)") {
		n.Store = s.p.internalStore(s, s.stepName+"-store", StoreKeyValue, n.Key, n.Value)
	}
	return n
}

// versionedSuppress refuses a suppress of a table with versioned semantics,
// as Kafka Streams does with a TopologyException ("suppress() is only
// supported for non-versioned KTables"), whether the table is versioned
// itself or inherits it through filter and map_values.
func (s *step) versionedSuppress() {
	src := versionedSource(s.in)
	switch {
	case src == nil:
		return
	case src == s.in:
		s.errf(s.pos, "suppress is only for tables that are not versioned, and %q is versioned", src.Name)
	default:
		s.errf(s.pos, "suppress is only for tables that are not versioned, and %q is versioned: it inherits versioned semantics from %q through filter and map_values", s.in.Name, src.Name)
	}
	s.p.hintf("Kafka Streams refuses this topology too; to suppress, copy the rows into a plain table first\n(`to_stream: {}`, then `to_table: {store: <name>}`), or read the topic without `versioned`")
}
