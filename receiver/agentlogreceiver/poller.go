// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"context"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"
)

// poller is what the polling readers share — the agents whose data is
// rewritten in place rather than appended (OpenCode, Gemini CLI): the
// agent's patterns and start settings, a tailer for the scoped store,
// emitting events and reporting bad records, and a goroutine that polls.
type poller struct {
	*tailer
	include, exclude []string
	excludeOlderThan time.Duration
	startAtEnd       bool
	// startedAt divides history from new data for start_at: end.
	startedAt time.Time

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newPoller(r *logsReceiver, host component.Host, a agent, ac *AgentConfig, include, exclude []string, hostname string) poller {
	return poller{
		tailer:           newTailer(r, host, a, hostname),
		include:          include,
		exclude:          exclude,
		excludeOlderThan: ac.ExcludeOlderThan,
		startAtEnd:       r.cfg.StartAt == StartAtEnd,
		startedAt:        time.Now(),
	}
}

// start calls poll at once and then every interval until halt.
func (p *poller) start(interval time.Duration, poll func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			poll(ctx)
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	p.r.set.Logger.Info("Reading agent session data",
		zap.String("agent", p.agent.key), zap.Strings("include", p.include), zap.Strings("exclude", p.exclude))
}

// halt ends polling; a poll under way finishes first.
func (p *poller) halt() {
	p.cancel()
	p.wg.Wait()
}

// excluded reports whether an exclude pattern matches path.
func (p *poller) excluded(path string) bool {
	for _, pattern := range p.exclude {
		if ok, _ := doublestar.PathMatch(pattern, path); ok {
			return true
		}
	}
	return false
}
