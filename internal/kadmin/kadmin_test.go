package kadmin

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestChores runs the three chores against an in-process cluster: a topic
// is created and led, another application's topics survive DeleteAppTopics,
// and waiting for a topic that does not exist ends with ctx and says why.
func TestChores(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, topic := range []string{"app-a-changelog", "app-b-changelog", "input"} {
		if err := Create(ctx, adm, topic, 3); err != nil {
			t.Fatal(err)
		}
	}
	if err := WaitLed(ctx, adm, map[string]int32{"app-a-changelog": 3, "input": 3}, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	DeleteAppTopics(ctx, adm, "app-a")
	// The deleted topic may linger in metadata for a moment.
	var got string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		tds, err := adm.ListTopics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got = strings.Join(tds.Names(), " "); got == "app-b-changelog input" {
			break
		}
	}
	if got != "app-b-changelog input" {
		t.Errorf("topics after DeleteAppTopics = %q", got)
	}
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	defer cancelShort()
	err = WaitLed(short, adm, map[string]int32{"input": 4}, 10*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `topic "input": 3 of 4 partitions in metadata`) {
		t.Errorf("WaitLed on the wrong count = %v", err)
	}
}
