package sgstream

import "fmt"

// slidingAggregator is Kafka's KStreamSlidingWindowAggregate (KIP-450).
// Windows are [start, start+d], both ends inclusive, stored by start; each
// record r@t has a left window [t-d, t] and, once a later record falls in
// (t, t+d], a right window [t+1, t+1+d]. Records with t < d all share the
// window [0, d] instead of windows with a negative start.
//
// Kafka's built-in stores support backward fetches, so Kafka runs
// processReverse; this is that algorithm, including its forward order:
// updates of existing windows by descending start, then the previous
// record's right window, then the left window, then the right window.
type slidingAggregator[K, V, VA any] struct {
	*windowAggCore[K, V, VA]
	d, grace int64
	wins     []slidingWin[VA]
	starts   map[int64]bool
}

// slidingWin is a stored window: its start and Kafka's ValueAndTimestamp.
type slidingWin[VA any] struct {
	start int64
	vt    slidingVT[VA]
}

// slidingVT is Kafka's nullable ValueAndTimestamp<VAgg>: null is true for a
// null ValueAndTimestamp (ValueAndTimestamp.make of a null aggregate).
type slidingVT[VA any] struct {
	agg  VA
	ts   int64
	null bool
}

func (p *slidingAggregator[K, V, VA]) make(agg VA, aggNull bool, ts int64) slidingVT[VA] {
	return slidingVT[VA]{agg: agg, ts: ts, null: aggNull}
}

func (p *slidingAggregator[K, V, VA]) Process(r Record[K, V]) error {
	if r.KeyNull || r.ValueNull {
		p.dropNull("key or value")
		return nil
	}
	t := r.Timestamp
	p.observe(t)
	p.setHeaders(r.Headers)
	closeTime := p.observed - p.grace
	if t+p.d < closeTime {
		p.drop(t, closeTime, fmt.Sprintf("[%d,%d]", t, t+p.d))
		return nil
	}
	if t < p.d {
		// Kafka returns from processEarly without the emit-final check.
		return p.processEarly(&r, closeTime)
	}
	if err := p.processReverse(&r, closeTime); err != nil {
		return err
	}
	return p.maybeEmitFinal(&r, closeTime)
}

// fetch loads key's windows with start in [from, to] before any of them is
// updated: the updates below write to the store, and Kafka's iterators
// see the windows as they were when fetched.
func (p *slidingAggregator[K, V, VA]) fetch(key K, from, to int64, backward bool) error {
	p.wins = p.wins[:0]
	if p.starts == nil {
		p.starts = map[int64]bool{}
	}
	clear(p.starts)
	visit := func(start int64, v TimestampedValue[VA]) error {
		p.wins = append(p.wins, slidingWin[VA]{start: start, vt: slidingVT[VA]{agg: v.Value, ts: v.Timestamp}})
		return nil
	}
	if backward {
		return p.store.BackwardFetchRange(key, from, to, visit)
	}
	return p.store.FetchRange(key, from, to, visit)
}

func (p *slidingAggregator[K, V, VA]) processReverse(r *Record[K, V], closeTime int64) error {
	t := r.Timestamp
	if err := p.fetch(r.Key, max(0, t-2*p.d), t+1, true); err != nil {
		return err
	}
	var leftWinAgg, rightWinAgg *slidingVT[VA]
	leftCreated, rightCreated := false, false
	prev, hasPrev := int64(0), false
loop:
	for i := range p.wins {
		w := &p.wins[i]
		p.starts[w.start] = true
		end := w.start + p.d
		switch {
		case w.start == t+1:
			rightCreated = true
		case end > t:
			if rightWinAgg == nil {
				rightWinAgg = &w.vt
			}
			if err := p.update(r, w.start, w.vt, closeTime); err != nil {
				return err
			}
		case end == t:
			leftCreated = true
			if err := p.update(r, w.start, w.vt, closeTime); err != nil {
				return err
			}
			if w.vt.ts < t {
				prev, hasPrev = w.vt.ts, true
			} else {
				// A record at t was already here: every window r needs
				// exists (Kafka returns before createWindows).
				return nil
			}
		default: // end < t
			leftWinAgg = &w.vt
			prev, hasPrev = w.vt.ts, true
			break loop
		}
	}
	return p.createWindows(r, closeTime, rightWinAgg, leftWinAgg, leftCreated, rightCreated, prev, hasPrev)
}

func (p *slidingAggregator[K, V, VA]) processEarly(r *Record[K, V], closeTime int64) error {
	t := r.Timestamp
	if err := p.fetch(r.Key, 0, t+1, false); err != nil {
		return err
	}
	var combined, rightWinAgg *slidingVT[VA]
	rightCreated := false
	prev, hasPrev := int64(0), false
	for i := range p.wins {
		w := &p.wins[i]
		p.starts[w.start] = true
		switch {
		case w.start == 0:
			combined = &w.vt
			if w.vt.ts < t {
				prev, hasPrev = w.vt.ts, true
			}
		case w.start <= t:
			rightWinAgg = &w.vt
			if err := p.update(r, w.start, w.vt, closeTime); err != nil {
				return err
			}
		default: // start == t+1
			rightCreated = true
		}
	}
	if rightWinAgg == nil && combined != nil && combined.ts > t {
		rightWinAgg = combined
	}
	if !rightCreated && rightWinAgg != nil && rightWinAgg.ts > t {
		if err := p.createRightWindow(r, *rightWinAgg); err != nil {
			return err
		}
	}
	if hasPrev && !p.starts[prev+1] {
		init, initNull := p.f.init()
		if err := p.update(r, prev+1, p.make(init, initNull, t), closeTime); err != nil {
			return err
		}
	}
	if combined == nil {
		init, initNull := p.f.init()
		return p.update(r, 0, p.make(init, initNull, t), closeTime)
	}
	return p.update(r, 0, *combined, closeTime)
}

func (p *slidingAggregator[K, V, VA]) createWindows(r *Record[K, V], closeTime int64, rightWinAgg, leftWinAgg *slidingVT[VA], leftCreated, rightCreated bool, prev int64, hasPrev bool) error {
	t := r.Timestamp
	// The previous record's right window, if no record created it yet and
	// r falls in it.
	if hasPrev && !p.starts[prev+1] && prev+1+p.d >= t {
		init, initNull := p.f.init()
		if err := p.update(r, prev+1, p.make(init, initNull, t), closeTime); err != nil {
			return err
		}
	}
	if !leftCreated {
		var vt slidingVT[VA]
		if hasPrev && t-p.d <= prev {
			// The left window holds the same records as the window that
			// ended before t, plus r.
			vt = p.make(leftWinAgg.agg, leftWinAgg.null, t)
		} else {
			init, initNull := p.f.init()
			vt = p.make(init, initNull, t)
		}
		if err := p.update(r, t-p.d, vt, closeTime); err != nil {
			return err
		}
	}
	if !rightCreated && rightWinAgg != nil && rightWinAgg.ts > t {
		return p.createRightWindow(r, *rightWinAgg)
	}
	return nil
}

// createRightWindow creates r's right window [t+1, t+1+d] as a copy of the
// window that contains the records after r (r is not in it), forwarded
// with that window's timestamp.
func (p *slidingAggregator[K, V, VA]) createRightWindow(r *Record[K, V], vt slidingVT[VA]) error {
	start := r.Timestamp + 1
	if err := p.put(r.Key, start, vt.agg, vt.null, vt.ts); err != nil {
		return err
	}
	var none VA
	win := Windowed[K]{Key: r.Key, Start: start, End: start + p.d}
	return p.forwardUpdate(r, win, none, true, vt.agg, vt.null, vt.ts)
}

// update adds r to the window starting at start whose current value is vt,
// unless the window is closed (end < close time): Kafka's
// updateWindowAndForward.
func (p *slidingAggregator[K, V, VA]) update(r *Record[K, V], start int64, vt slidingVT[VA], closeTime int64) error {
	t := r.Timestamp
	end := start + p.d
	if end < closeTime {
		p.drop(t, closeTime, fmt.Sprintf("[%d,%d]", start, end))
		return nil
	}
	oldAgg, oldNull := vt.agg, vt.null
	newTs := t
	if !oldNull {
		newTs = max(t, vt.ts)
	}
	newAgg, newNull := p.f.add(r.Key, r.Value, r.ValueNull, oldAgg, oldNull)
	if err := p.put(r.Key, start, newAgg, newNull, newTs); err != nil {
		return err
	}
	return p.forwardUpdate(r, Windowed[K]{Key: r.Key, Start: start, End: end}, oldAgg, oldNull, newAgg, newNull, newTs)
}

// maybeEmitFinal emits the windows that closed since the last emission:
// start in [last - d, closeTime - d - 1], i.e. end < closeTime.
func (p *slidingAggregator[K, V, VA]) maybeEmitFinal(r *Record[K, V], closeTime int64) error {
	if p.emit != EmitOnClose || !p.em.due(closeTime) {
		return nil
	}
	upper := closeTime - p.d - 1
	if upper < 0 {
		return nil
	}
	lower := int64(0)
	if p.em.last != -1 {
		lower = max(0, p.em.last-p.d)
	}
	return p.emitRange(r, closeTime, lower, upper, p.d)
}
