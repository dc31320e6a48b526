// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package state

import (
	"context"
	"encoding/json"
	"fmt"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// Loader reads saved sessions back.
type Loader interface {
	// LoadSession returns the saved record of a session, nil when none.
	LoadSession(sk spanmodel.SessKey) (*SessionRecord, error)
	// LoadEvents returns the n saved events of an open unit.
	LoadEvents(k spanmodel.UnitKey, n int) ([]agentevent.Event, error)
}

// StorageLoader reads saved sessions from a storage client.
type StorageLoader struct {
	Ctx    context.Context
	Client storage.Client
	// Unreadable is told of a saved record this version cannot read; the
	// record is then treated as absent.
	Unreadable func(key string, err error)
}

var _ Loader = StorageLoader{}

// LoadSession implements Loader.
func (l StorageLoader) LoadSession(sk spanmodel.SessKey) (*SessionRecord, error) {
	b, err := l.Client.Get(l.Ctx, SessionKey(sk))
	if err != nil || b == nil {
		return nil, err
	}
	var rec SessionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		l.Unreadable(SessionKey(sk), err)
		return nil, nil
	}
	if rec.Version != Version {
		l.Unreadable(SessionKey(sk), fmt.Errorf("version %d, this connector reads version %d", rec.Version, Version))
		return nil, nil
	}
	return &rec, nil
}

// LoadEvents implements Loader.
func (l StorageLoader) LoadEvents(k spanmodel.UnitKey, n int) ([]agentevent.Event, error) {
	ops := make([]*storage.Operation, n)
	keys := UnitEventKeys(k)
	for i := range ops {
		ops[i] = storage.GetOperation(keys.Key(i))
	}
	if n > 0 {
		if err := l.Client.Batch(l.Ctx, ops...); err != nil {
			return nil, err
		}
	}
	evs := make([]agentevent.Event, 0, n)
	for _, op := range ops {
		if op.Value == nil {
			return nil, fmt.Errorf("saved state: event %s missing", op.Key)
		}
		ev, err := DecodeEvents(op.Value)
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev...)
	}
	return evs, nil
}
