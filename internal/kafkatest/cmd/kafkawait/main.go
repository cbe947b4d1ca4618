// Command kafkawait blocks until a Kafka broker is ready to serve clients, for
// scripts/kafka.sh start. An open port is not enough: a KRaft broker accepts connections
// before it has registered with its controller and been unfenced, and only then does it
// list itself in metadata responses and accept CreateTopics. kafkawait therefore retries
// a Metadata request until the response names at least one broker and a controller.
//
// Exit status: 0 ready, 1 not ready before -timeout, 2 bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func main() {
	brokers := flag.String("brokers", "", "comma-separated seed brokers (host:port)")
	timeout := flag.Duration("timeout", 60*time.Second, "give up after this long")
	flag.Parse()
	if *brokers == "" {
		fmt.Fprintln(os.Stderr, "kafkawait: -brokers is required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := wait(ctx, strings.Split(*brokers, ",")); err != nil {
		fmt.Fprintf(os.Stderr, "kafkawait: %v\n", err)
		os.Exit(1)
	}
}

func wait(ctx context.Context, seeds []string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DialTimeout(2*time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	var last error
	for {
		last = probe(ctx, cl)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("broker %s not ready: %w", strings.Join(seeds, ","), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func probe(ctx context.Context, cl *kgo.Client) error {
	reqCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // no topics, just the cluster view
	resp, err := req.RequestWith(reqCtx, cl)
	if err != nil {
		return err
	}
	if len(resp.Brokers) == 0 {
		return errors.New("metadata lists no brokers yet (not registered or still fenced)")
	}
	if resp.ControllerID < 0 {
		return errors.New("metadata names no controller yet")
	}
	return nil
}
