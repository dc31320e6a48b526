// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"time"
)

// clock is the time a receiver runs on (injected by tests).
type clock struct {
	now  func() time.Time
	wait func(ctx context.Context, d time.Duration) error
}

func realClock() clock {
	return clock{now: time.Now, wait: func(ctx context.Context, d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}}
}
