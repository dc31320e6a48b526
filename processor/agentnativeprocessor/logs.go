// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/processor/agentnativeprocessor/internal/metadata"
	"github.com/agentotel/agentotel/processor/agentnativeprocessor/internal/owners"
)

// mappedGroup is the agent events mapped from one native resource that
// share a resource of their own: agent and version.
type mappedGroup struct {
	source  agentevent.Source
	version string
	host    string
	events  []agentevent.Event
}

// processLogs maps the native log records of known agents to agent events
// and applies the one-session-one-source rule to every agent event. The
// owners the batch decided are saved before it is handed on.
func (p *nativeProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	had := ld.LogRecordCount() > 0
	txn := p.table.Begin()
	var (
		groups  []*mappedGroup
		err     error
		changed bool
	)
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len() && err == nil; i++ {
		rl := rls.At(i)
		var res *resourceInfo
		service := ""
		if v, ok := rl.Resource().Attributes().Get(agentevent.ResourceServiceName); ok {
			service = v.AsString()
		}
		// byKey indexes this resource's groups.
		byKey := map[[2]string]*mappedGroup{}
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len() && err == nil; j++ {
			sl := sls.At(j)
			scope := sl.Scope().Name()
			agent := p.reg.match(service, scope, false)
			sl.LogRecords().RemoveIf(func(lr plog.LogRecord) bool {
				if err != nil {
					return false
				}
				if _, ok := lr.Attributes().Get(agentevent.AttrSchemaVersion); ok {
					keep, e := p.admitAgentEvent(ctx, txn, lr)
					err = e
					changed = changed || !keep
					return e == nil && !keep
				}
				if agent == nil {
					return false
				}
				mapper := p.mappers[agent.source]
				if mapper == nil {
					p.countRecord(ctx, agent.source, outcomePassed)
					return false
				}
				if res == nil {
					r := liftResource(rl.Resource())
					res = &r
				}
				rec := liftRecord(res, scope, lr)
				events, mapErr := mapper.Map(rec)
				switch {
				case mapErr != nil:
					if !errors.Is(mapErr, agentevent.ErrNativeUnmapped) {
						mapErr = errors.Join(agentevent.ErrNativeUnmapped, mapErr)
					}
					p.countRecord(ctx, agent.source, outcomeUnmapped)
					p.logUnmapped(rec, mapErr)
				case len(events) == 0:
					p.countRecord(ctx, agent.source, outcomeIgnored)
				default:
					p.countRecord(ctx, agent.source, outcomeMapped)
					for k := range events {
						ev := &events[k]
						if ev.Source == "" {
							ev.Source = agent.source
						}
						keep, e := p.admitMapped(ctx, txn, ev)
						if e != nil {
							err = e
							return false
						}
						if !keep {
							continue
						}
						p.prepareEvent(ev)
						gk := [2]string{string(ev.Source), ev.AgentVersion}
						g := byKey[gk]
						if g == nil {
							g = &mappedGroup{source: ev.Source, version: ev.AgentVersion, host: res.host}
							byKey[gk] = g
							groups = append(groups, g)
						}
						g.events = append(g.events, *ev)
					}
				}
				changed = true
				return true
			})
		}
	}
	if err != nil {
		return ld, err
	}
	if err := txn.Commit(ctx); err != nil {
		return ld, err
	}
	if !changed {
		return ld, nil
	}
	removeEmpty(ld)
	for _, g := range groups {
		rl := ld.ResourceLogs().AppendEmpty()
		agentevent.SetResource(rl.Resource(), g.source, g.version)
		if g.host != "" {
			rl.Resource().Attributes().PutStr(agentevent.ResourceHostName, g.host)
		}
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName(metadata.ScopeName)
		lrs := sl.LogRecords()
		lrs.EnsureCapacity(len(g.events))
		for k := range g.events {
			agentevent.Encode(g.events[k], lrs.AppendEmpty())
		}
	}
	if had && ld.LogRecordCount() == 0 {
		return ld, processorhelper.ErrSkipProcessingData
	}
	return ld, nil
}

// removeEmpty drops the scopes and resources left without records. Only
// called when this batch removed records: a batch handed on unchanged
// stays as it came.
func removeEmpty(ld plog.Logs) {
	ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool { return sl.LogRecords().Len() == 0 })
		return rl.ScopeLogs().Len() == 0
	})
}

// admitAgentEvent applies the one-source rule to an agent event already
// encoded (agent_log's file events, or events an upstream agent_native
// mapped): false drops it.
func (p *nativeProcessor) admitAgentEvent(ctx context.Context, txn *owners.Txn, lr plog.LogRecord) (bool, error) {
	a := lr.Attributes()
	str := func(k string) string {
		if v, ok := a.Get(k); ok && v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
		return ""
	}
	k := owners.Key{Source: str(agentevent.AttrSource), Session: str(agentevent.AttrSessionID)}
	if k.Session == "" {
		return true, nil
	}
	o := owners.Files
	if str(agentevent.AttrOrigin) == agentevent.OriginNative {
		o = owners.Native
	}
	ok, err := txn.Admit(ctx, k, o, lr.Timestamp().AsTime())
	if err != nil || ok {
		return ok, err
	}
	p.dropOtherSource(ctx, k, o)
	return false, nil
}

// admitMapped applies the one-source rule to an event mapped from a native
// record, and marks it covered when the agent's own spans hold its turn.
func (p *nativeProcessor) admitMapped(ctx context.Context, txn *owners.Txn, ev *agentevent.Event) (bool, error) {
	if ev.SessionID == "" {
		return true, nil
	}
	k := owners.Key{Source: string(ev.Source), Session: ev.SessionID}
	ok, err := txn.Admit(ctx, k, owners.Native, ev.Timestamp)
	if err != nil {
		return false, err
	}
	if !ok {
		p.dropOtherSource(ctx, k, owners.Native)
		return false, nil
	}
	tid, _ := ev.Attributes[agentevent.AttrNativeTraceID].(string)
	covered := p.traces.contains(tid)
	if !covered {
		if covered, err = txn.HasSpans(ctx, k); err != nil {
			return false, err
		}
	}
	if covered {
		agentevent.SetAttr(ev, agentevent.AttrNativeCovered, true)
	}
	return true, nil
}
