package sgstream

// Missing says which sides of a join a joiner call lacks: the unmatched
// side of a left or outer join, passed as the zero value of its type.
// Records are pointers, so theirs is nil already; for primitive and enum
// values the zero value is also a value, and Missing tells Kafka's null
// from 0 or "". The generator's pointer adapters (OptionalRight,
// OptionalLeft, OptionalSides) turn it into a nil pointer.
type Missing uint8

const (
	// MissingLeft: the left side has no value.
	MissingLeft Missing = 1 << iota
	// MissingRight: the right side has no value.
	MissingRight
)

// missingSides is the Missing of a call whose left and right sides are
// absent as given.
func missingSides(left, right bool) Missing {
	var m Missing
	if left {
		m |= MissingLeft
	}
	if right {
		m |= MissingRight
	}
	return m
}

// Joiner is a join's value joiner: the key and the values in (left, right)
// order, whichever side triggered, and which of them is missing.
type Joiner[K, V1, V2, VR any] func(key K, left V1, right V2, missing Missing) VR

// ValueJoiner is a joiner that reads a missing side as its zero value (nil
// for records): Kafka's ValueJoinerWithKey.
func ValueJoiner[K, V1, V2, VR any](f func(key K, left V1, right V2) VR) Joiner[K, V1, V2, VR] {
	return func(key K, left V1, right V2, _ Missing) VR { return f(key, left, right) }
}

// OptionalRight is a joiner whose right side is nil when it is missing (a
// left join of primitive or enum values).
func OptionalRight[K, V1, V2, VR any](f func(key K, left V1, right *V2) VR) Joiner[K, V1, V2, VR] {
	return func(key K, left V1, right V2, m Missing) VR { return f(key, left, present(right, m&MissingRight == 0)) }
}

// OptionalLeft is a joiner whose left side is nil when it is missing (an
// outer join whose right values are records).
func OptionalLeft[K, V1, V2, VR any](f func(key K, left *V1, right V2) VR) Joiner[K, V1, V2, VR] {
	return func(key K, left V1, right V2, m Missing) VR { return f(key, present(left, m&MissingLeft == 0), right) }
}

// OptionalSides is a joiner whose sides are nil when they are missing (an
// outer join of primitive or enum values).
func OptionalSides[K, V1, V2, VR any](f func(key K, left *V1, right *V2) VR) Joiner[K, V1, V2, VR] {
	return func(key K, left V1, right V2, m Missing) VR {
		return f(key, present(left, m&MissingLeft == 0), present(right, m&MissingRight == 0))
	}
}

// present is a pointer to v, or nil when v is a missing side's zero value.
func present[V any](v V, ok bool) *V {
	if !ok {
		return nil
	}
	return &v
}
