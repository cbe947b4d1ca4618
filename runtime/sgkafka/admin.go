package sgkafka

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// CreateTopics creates topics (name → partition count, replication factor
// 1) on the cluster at brokers and waits until every partition has a
// leader. It is for development clusters, such as the run command's
// embedded broker; production topics are the operator's (the engine
// creates only its internal topics). A topic that exists is an error.
func CreateTopics(ctx context.Context, brokers []string, topics map[string]int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		return fmt.Errorf("streamgen: embedded kafka: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var names []string
	for name, n := range topics {
		resp, err := adm.CreateTopic(ctx, int32(n), 1, nil, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			return fmt.Errorf("streamgen: embedded kafka: creating topic %q: %w", name, err)
		}
		names = append(names, name)
	}
	return waitTopics(ctx, adm, names)
}
