//go:build !streamgen_nokfake

package sgrun

import "github.com/twmb/franz-go/pkg/kfake"

// The embedded broker is franz-go's kfake, linked unless the binary is
// built with -tags streamgen_nokfake (docs/operations.md, "The embedded
// broker", has what it costs). It listens on 127.0.0.1 on a random port.
func init() {
	newEmbeddedCluster = func() ([]string, func(), error) {
		c, err := kfake.NewCluster(kfake.NumBrokers(1),
			kfake.BrokerConfigs(map[string]string{"group.consumer.heartbeat.interval.ms": "250"}))
		if err != nil {
			return nil, nil, err
		}
		return c.ListenAddrs(), c.Close, nil
	}
}
