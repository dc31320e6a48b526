// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package jsonl

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
)

// pendingFlushes are the files whose parser may hold events back until the
// file settles, with the end of the data read. Only files read to their end
// while being written are here, so it stays as small as the set of live
// sessions.
type pendingFlushes struct {
	cp   *checkpoint.Store
	mu   sync.Mutex
	ends map[string]int64
}

func (p *pendingFlushes) load(ctx context.Context, onError func(error)) {
	b, err := p.cp.GetBlob(ctx, checkpoint.PendingFlushKey)
	if err != nil {
		onError(fmt.Errorf("read %s: %w", checkpoint.PendingFlushKey, err))
		return
	}
	if len(b) == 0 {
		return
	}
	ends := map[string]int64{}
	if err := json.Unmarshal(b, &ends); err != nil {
		onError(fmt.Errorf("decode %s: %w", checkpoint.PendingFlushKey, err))
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	maps.Copy(p.ends, ends)
}

func (p *pendingFlushes) get(path string) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	end, ok := p.ends[path]
	return end, ok
}

func (p *pendingFlushes) snapshot() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.ends)
}

func (p *pendingFlushes) put(ctx context.Context, path string, end int64, onError func(error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.ends[path]; ok && e == end {
		return
	}
	p.ends[path] = end
	p.saveLocked(ctx, onError)
}

func (p *pendingFlushes) remove(ctx context.Context, path string, onError func(error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.ends[path]; !ok {
		return
	}
	delete(p.ends, path)
	p.saveLocked(ctx, onError)
}

func (p *pendingFlushes) saveLocked(ctx context.Context, onError func(error)) {
	b, err := json.Marshal(p.ends)
	if err == nil {
		err = p.cp.SetBlob(ctx, checkpoint.PendingFlushKey, b)
	}
	if err != nil {
		onError(fmt.Errorf("write %s: %w", checkpoint.PendingFlushKey, err))
	}
}
