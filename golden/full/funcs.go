package full

import (
	"errors"

	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// The user functions of the full golden case: every role once.

func AddOrderActivity(key string, value *Order, agg *Stats) *Stats {
	return &Stats{Count: agg.Count + 1, Total: agg.Total + value.Amount}
}

func AddOrder(key string, value *Order, agg *Stats) *Stats { return AddOrderActivity(key, value, agg) }

func AddPaymentActivity(key string, value *Payment, agg *Stats) *Stats {
	return &Stats{Count: agg.Count, Total: agg.Total + value.Amount}
}

func AddUser(key string, value *User, agg *Stats) *Stats { return &Stats{Count: agg.Count + 1} }

func ChooseTopic(key string, value *Order) string {
	if value.Paid {
		return "paid-orders"
	}
	return "open-orders"
}

func DropUser(agg *User, value *User) *User { return agg }

func Enrich(key string, left *Order, right *User) *Enriched {
	return &Enriched{Order: left, User: right}
}

func IsTest(key string, value *Order) bool { return value != nil && value.Note != nil }

func ItemsBySku(key string, value *Item) []sgstream.KeyValue[string, *Item] {
	return []sgstream.KeyValue[string, *Item]{{Key: value.SKU, Value: value}}
}

func Items(key string, value *Order) []*Item {
	out := make([]*Item, len(value.Items))
	for i := range value.Items {
		out[i] = &value.Items[i]
	}
	return out
}

func JoinUser(key string, left *Order, right *User) *Enriched { return Enrich(key, left, right) }

func LatestOrder(agg *Order, value *Order) *Order { return value }

func MatchPayment(key string, left *Order, right *Payment) *Order {
	out := *left
	out.Paid = right != nil
	return &out
}

func MergeStats(key string, a *Stats, b *Stats) *Stats {
	return &Stats{Count: a.Count + b.Count, Total: a.Total + b.Total}
}

// dedup forwards an order only the first time its key is seen.
type dedup struct {
	ctx  *sgstream.ProcessorContext[string, *Order]
	seen map[string]bool
}

func NewDedup() sgstream.Processor[string, *Order, string, *Order] { return &dedup{} }

func (d *dedup) Init(ctx *sgstream.ProcessorContext[string, *Order]) error {
	d.ctx, d.seen = ctx, map[string]bool{}
	return nil
}

func (d *dedup) Process(r sgstream.Record[string, *Order]) error {
	if d.seen[r.Key] {
		return nil
	}
	d.seen[r.Key] = true
	return d.ctx.Forward(r)
}

func (d *dedup) Close() error { return nil }

// itemCounter counts items per SKU.
type itemCounter struct {
	ctx    *sgstream.ProcessorContext[string, int64]
	counts map[string]int64
}

func NewItemProcessor() sgstream.Processor[string, *Item, string, int64] { return &itemCounter{} }

func (p *itemCounter) Init(ctx *sgstream.ProcessorContext[string, int64]) error {
	p.ctx, p.counts = ctx, map[string]int64{}
	return nil
}

func (p *itemCounter) Process(r sgstream.Record[string, *Item]) error {
	p.counts[r.Key] += int64(r.Value.Qty)
	return p.ctx.Forward(sgstream.Record[string, int64]{Key: r.Key, Value: p.counts[r.Key], Timestamp: r.Timestamp})
}

func (p *itemCounter) Close() error { return nil }

func NewStats() *Stats { return &Stats{} }

// NewVisitStore is the user-written store of the spec's stores section.
func NewVisitStore() sgstate.Store { return &visitStore{} }

type visitStore struct{ open bool }

func (s *visitStore) Name() string { return "visits" }

func (s *visitStore) Init(ctx *sgstate.StoreContext) error {
	if s.open {
		return errors.New("visits: opened twice")
	}
	s.open = true
	return nil
}

func (s *visitStore) Flush() error { return nil }

func (s *visitStore) Close() error { s.open = false; return nil }

func Normalize(key string, value *Order) *Order { return value }

func PickUser(agg *User, value *User) *User { return value }

func PrintItem(key string, value int64) {}

func Print(key string, value *Enriched) {}

func StatusOf(key string, value *Order) Status { return value.Status }

func Unwindow(key sgstream.Windowed[string], value int64) (string, int64) { return key.Key, value }

func UserByCountry(key string, value *User) (string, *User) { return value.Country, value }

func UserTotals(key string, left *User, right *Stats) *Enriched { return &Enriched{User: left} }

func SubUser(key string, value *User, agg *Stats) *Stats { return &Stats{Count: agg.Count - 1} }
