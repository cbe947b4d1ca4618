package sgkafka

import (
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// defaultSessionTimeout is Kafka's session.timeout.ms default.
const defaultSessionTimeout = 45 * time.Second

// groupInstanceID is the static member id of worker idx: the configured
// id, suffixed with the worker index when the instance runs several
// workers (each must be a member of its own), as Kafka Streams suffixes
// group.instance.id per stream thread.
func (e *Engine) groupInstanceID(idx int) string {
	if e.cfg.GroupInstanceID == "" {
		return ""
	}
	if e.cfg.Workers > 1 {
		return e.cfg.GroupInstanceID + "-" + strconv.Itoa(idx)
	}
	return e.cfg.GroupInstanceID
}

// membershipOpts are the group client's session and static membership
// options. A static member killed with SIGKILL and restarted under the
// same id before its session times out takes its place in the group at
// once: the coordinator hands it the dead member's assignment, so the
// other members neither wait for the session timeout nor rebalance.
func (e *Engine) membershipOpts(idx int) []kgo.Opt {
	st := e.cfg.SessionTimeout
	if st <= 0 {
		st = defaultSessionTimeout
	}
	opts := []kgo.Opt{kgo.SessionTimeout(st)}
	// Kafka's rule: heartbeats at most a third of the session timeout.
	if hb := st / 3; hb < 3*time.Second {
		opts = append(opts, kgo.HeartbeatInterval(hb))
	}
	if id := e.groupInstanceID(idx); id != "" {
		opts = append(opts, kgo.InstanceID(id))
	}
	return opts
}
