package evolve

import (
	"fmt"

	"github.com/streamgen/streamgen/spec"
)

// keyType reports a changed key type. Keys must keep their exact bytes:
// they choose the partition and the store slot, so even a change the value
// decoder would accept (int32 to int64) breaks.
func (c *comparer) keyType(pos spec.Pos, where string, old, new *spec.Type, consequence, remedy string) {
	if old == nil || new == nil || sameKey(old, new, map[[2]*spec.Record]bool{}) {
		return
	}
	c.add(pos, Breaking, remedy, "%s: %s: %s", where, keyChange(old, new), consequence)
}

// keyChange says how a key type changed.
func keyChange(old, new *spec.Type) string {
	if old.String() == new.String() {
		return fmt.Sprintf("key type %s changes its fields", new)
	}
	return fmt.Sprintf("key type changes from %s to %s", old, new)
}

// sameKey reports whether values of the two types encode to the same bytes.
// Field and enum value names do not matter (the bytes carry ids and
// numbers); everything else does.
func sameKey(a, b *spec.Type, seen map[[2]*spec.Record]bool) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case spec.KindOptional, spec.KindList, spec.KindMap, spec.KindWindowed, spec.KindSessionWindowed:
		return sameKey(a.Elem, b.Elem, seen)
	case spec.KindEnum:
		return len(enumRenumbered(a.Enum, b.Enum)) == 0
	case spec.KindRecord:
		k := [2]*spec.Record{a.Record, b.Record}
		if seen[k] {
			return true
		}
		seen[k] = true
		if len(a.Record.Fields) != len(b.Record.Fields) {
			return false
		}
		for i, f := range a.Record.Fields {
			g := b.Record.Fields[i] // both sorted by id
			if f.ID != g.ID || !sameKey(f.Type, g.Type, seen) {
				return false
			}
		}
	}
	return true
}

// enumRenumbered lists the values of b whose name a gives another number.
func enumRenumbered(a, b *spec.Enum) [][2]*spec.EnumValue {
	var out [][2]*spec.EnumValue
	for _, nv := range b.Values {
		for _, ov := range a.Values {
			if ov.Name == nv.Name && ov.Number != nv.Number {
				out = append(out, [2]*spec.EnumValue{ov, nv})
			}
		}
	}
	return out
}

// valueType reports value changes. Normally the new version reads bytes
// written with the old type (state, topics it reads); with forward set,
// consumers still on the old type read bytes the new version writes (topics
// it only writes).
func (c *comparer) valueType(pos spec.Pos, where string, old, new *spec.Type, forward bool) {
	if old == nil || new == nil {
		return
	}
	v := &valueCheck{c: c, where: where, forward: forward, seen: map[[2]*spec.Record]bool{}, seenEnum: map[[2]*spec.Enum]bool{}}
	v.check(pos, "", old, new)
}

type valueCheck struct {
	c        *comparer
	where    string
	forward  bool
	seen     map[[2]*spec.Record]bool
	seenEnum map[[2]*spec.Enum]bool
}

func (v *valueCheck) add(pos spec.Pos, sev Severity, remedy, format string, args ...any) {
	if v.forward {
		// Other applications read what this one only writes: they need
		// to hear of it, but this application does not break.
		sev = Warning
	}
	ch := v.c.add(pos, sev, remedy, format, args...)
	ch.where = append(ch.where, v.where)
}

// consequence says who fails to read what.
func (v *valueCheck) consequence() string {
	if v.forward {
		return "consumers still on the old schema cannot read new records"
	}
	return "records written before the upgrade no longer decode"
}

func unoptional(t *spec.Type) *spec.Type {
	for t.Kind == spec.KindOptional {
		t = t.Elem
	}
	return t
}

// check compares old and new at path ("" for the top, else the field path
// that led here, for messages).
func (v *valueCheck) check(pos spec.Pos, path string, old, new *spec.Type) {
	// A nil field is a missing one, and a missing one takes its default,
	// so optional<T> and T read each other's bytes.
	o, n := unoptional(old), unoptional(new)
	writer, reader := o, n
	if v.forward {
		writer, reader = n, o
	}
	what := "type"
	if path != "" {
		what = path
	}
	switch {
	case o.Kind == spec.KindRecord && n.Kind == spec.KindRecord:
		v.records(pos, o.Record, n.Record)
		return
	case o.Kind == spec.KindEnum && n.Kind == spec.KindEnum:
		v.enums(o.Enum, n.Enum)
		return
	case (o.Kind == spec.KindList && n.Kind == spec.KindList) || (o.Kind == spec.KindMap && n.Kind == spec.KindMap):
		v.check(pos, path, o.Elem, n.Elem)
		return
	}
	ok, lossy := readable(writer, reader)
	switch {
	case !ok:
		v.add(pos, Breaking, "keep the type; to change it, add a field with a new id (and retire the old one), or use a new topic or store name",
			"%s changes from %s to %s: %s", what, old, new, v.consequence())
	case lossy != "":
		v.add(pos, Warning, "keep the type unless the loss is acceptable",
			"%s changes from %s to %s: %s", what, old, new, lossy)
	}
}

// records pairs fields by id.
func (v *valueCheck) records(pos spec.Pos, old, new *spec.Record) {
	k := [2]*spec.Record{old, new}
	if v.seen[k] {
		return
	}
	v.seen[k] = true
	byID := map[int]*spec.Field{}
	for _, f := range old.Fields {
		byID[f.ID] = f
	}
	newIDs := map[int]bool{}
	for _, nf := range new.Fields {
		newIDs[nf.ID] = true
		of := byID[nf.ID]
		if of == nil {
			// Added: old bytes lack it (backward), old readers skip it
			// (forward).
			if !v.forward && nf.Type.Kind != spec.KindOptional && nf.Default == nil {
				v.add(nf.Pos, Warning, fmt.Sprintf("give it a default (`default: ...`) or make it optional<%s>", nf.Type),
					"record %q: new field %q (id %d) has no default: records written before the upgrade read it as the zero value of %s", new.Name, nf.Name, nf.ID, nf.Type)
			}
			continue
		}
		if of.Name != nf.Name && !compatible(of.Type, nf.Type, v.forward) {
			v.add(nf.Pos, Breaking, fmt.Sprintf("give %q a new id and never reuse id %d", nf.Name, nf.ID),
				"record %q: field id %d was %q (%s) and is reused for %q (%s): %s", new.Name, nf.ID, of.Name, of.Type, nf.Name, nf.Type, v.consequence())
			continue
		}
		v.check(nf.Pos, fmt.Sprintf("record %q: field %q (id %d)", new.Name, nf.Name, nf.ID), of.Type, nf.Type)
	}
	for _, of := range old.Fields {
		if newIDs[of.ID] {
			continue
		}
		// Removed: new readers skip it in old bytes; consumers on the old
		// schema miss it in new bytes and take its default.
		if v.forward && of.Type.Kind != spec.KindOptional && of.Default == nil {
			v.add(new.Pos, Warning, fmt.Sprintf("keep writing the field, or make sure its consumers accept a zero %s; never reuse id %d", of.Type, of.ID),
				"record %q: field %q (id %d) is removed: consumers still on the old schema read it as the zero value of %s", new.Name, of.Name, of.ID, of.Type)
		}
	}
}

// compatible reports whether a field type change reads without error.
func compatible(old, new *spec.Type, forward bool) bool {
	o, n := unoptional(old), unoptional(new)
	if o.Kind == spec.KindRecord && n.Kind == spec.KindRecord {
		return true // checked field by field
	}
	if o.Kind == n.Kind && (o.Kind == spec.KindList || o.Kind == spec.KindMap) {
		return compatible(o.Elem, n.Elem, forward)
	}
	if o.Kind == spec.KindEnum && n.Kind == spec.KindEnum {
		return true
	}
	if forward {
		o, n = n, o
	}
	ok, _ := readable(o, n)
	return ok
}

func (v *valueCheck) enums(old, new *spec.Enum) {
	k := [2]*spec.Enum{old, new}
	if v.seenEnum[k] {
		return
	}
	v.seenEnum[k] = true
	for _, p := range enumRenumbered(old, new) {
		v.add(p[1].Pos, Breaking, fmt.Sprintf("keep %q at %d; a new value needs a new number", p[1].Name, p[0].Number),
			"enum %q: value %q changes number from %d to %d: stored %d now reads as another value", new.Name, p[1].Name, p[0].Number, p[1].Number, p[0].Number)
	}
}

// intRange is the range of values a scalar kind holds on the wire, for
// kinds written as msgpack integers.
func intRange(k spec.TypeKind) (lo, hi float64, ok bool) {
	switch k {
	case spec.KindInt32, spec.KindEnum:
		return -1 << 31, 1<<31 - 1, true
	case spec.KindInt64, spec.KindTimestamp, spec.KindDuration:
		return -1 << 63, 1<<63 - 1, true
	case spec.KindUint32:
		return 0, 1<<32 - 1, true
	case spec.KindUint64:
		return 0, 1<<64 - 1, true
	}
	return 0, 0, false
}

func isFloat(k spec.TypeKind) bool { return k == spec.KindFloat32 || k == spec.KindFloat64 }

// readable says whether a reader of type r decodes every value a writer of
// type w wrote (ok), and what it loses if it decodes them inexactly.
// Records, lists and maps are compared by the caller.
func readable(w, r *spec.Type) (ok bool, lossy string) {
	if w.Kind == r.Kind && w.Primitive() {
		return true, ""
	}
	switch {
	case (w.Kind == spec.KindString || w.Kind == spec.KindBytes) && (r.Kind == spec.KindString || r.Kind == spec.KindBytes):
		return true, ""
	case isFloat(r.Kind) && isFloat(w.Kind):
		if w.Kind == spec.KindFloat64 && r.Kind == spec.KindFloat32 {
			return true, "values are rounded to float32"
		}
		return true, ""
	}
	wlo, whi, wint := intRange(w.Kind)
	if wint && isFloat(r.Kind) {
		return true, ""
	}
	rlo, rhi, rint := intRange(r.Kind)
	if wint && rint {
		return rlo <= wlo && whi <= rhi, ""
	}
	return false, ""
}
