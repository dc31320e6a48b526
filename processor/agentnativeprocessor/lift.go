// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// attrEventName is the attribute the agents name their log events by.
const attrEventName = "event.name"

// rawAttrs lifts a pdata map into Go values. A key the map holds twice
// (Codex sends thread.id once as a string and once as a number) keeps the
// string value if one of them is a string, else the last one.
func rawAttrs(m pcommon.Map) map[string]any {
	out := make(map[string]any, m.Len())
	for k, v := range m.All() {
		if prev, dup := out[k]; dup {
			if _, isStr := prev.(string); isStr && v.Type() != pcommon.ValueTypeStr {
				continue
			}
		}
		out[k] = v.AsRaw()
	}
	return out
}

// hexID is the hex form of a trace or span id, "" for the empty id.
func hexID[T interface {
	IsEmpty() bool
	String() string
}](id T) string {
	if id.IsEmpty() {
		return ""
	}
	return id.String()
}

// resourceInfo is what the lifts take from a resource.
type resourceInfo struct {
	service, version, host string
	attrs                  map[string]any
}

func liftResource(res pcommon.Resource) resourceInfo {
	a := res.Attributes()
	str := func(k string) string {
		if v, ok := a.Get(k); ok {
			return v.AsString()
		}
		return ""
	}
	return resourceInfo{
		service: str(agentevent.ResourceServiceName),
		version: str(agentevent.ResourceServiceVersion),
		host:    str(agentevent.ResourceHostName),
		attrs:   rawAttrs(a),
	}
}

// liftRecord turns a log record into a NativeRecord.
func liftRecord(res *resourceInfo, scope string, lr plog.LogRecord) *agentevent.NativeRecord {
	rec := &agentevent.NativeRecord{
		Service:        res.service,
		ServiceVersion: res.version,
		Scope:          scope,
		TraceID:        hexID(lr.TraceID()),
		SpanID:         hexID(lr.SpanID()),
		Attrs:          rawAttrs(lr.Attributes()),
		Resource:       res.attrs,
	}
	switch {
	case agentevent.NativeStr(rec.Attrs[attrEventName]) != "":
		rec.Name = agentevent.NativeStr(rec.Attrs[attrEventName])
	case lr.EventName() != "":
		rec.Name = lr.EventName()
	case lr.Body().Type() == pcommon.ValueTypeStr:
		rec.Name = lr.Body().Str()
	}
	switch {
	case lr.Timestamp() != 0:
		rec.Time = lr.Timestamp().AsTime()
	case lr.ObservedTimestamp() != 0:
		rec.Time = lr.ObservedTimestamp().AsTime()
	}
	return rec
}

// liftSpan turns a span into a NativeSpan.
func liftSpan(res *resourceInfo, scope string, s ptrace.Span) *agentevent.NativeSpan {
	sp := &agentevent.NativeSpan{
		Service:        res.service,
		ServiceVersion: res.version,
		Scope:          scope,
		Name:           s.Name(),
		Kind:           int(s.Kind()),
		TraceID:        hexID(s.TraceID()),
		SpanID:         hexID(s.SpanID()),
		ParentSpanID:   hexID(s.ParentSpanID()),
		Attrs:          rawAttrs(s.Attributes()),
		StatusError:    s.Status().Code() == ptrace.StatusCodeError,
		StatusMessage:  s.Status().Message(),
	}
	if s.StartTimestamp() != 0 {
		sp.Start = s.StartTimestamp().AsTime()
	}
	if s.EndTimestamp() != 0 {
		sp.End = s.EndTimestamp().AsTime()
	}
	for _, e := range s.Events().All() {
		sp.Events = append(sp.Events, agentevent.NativeSpanEvent{Name: e.Name(), Time: e.Timestamp().AsTime(), Attrs: rawAttrs(e.Attributes())})
	}
	return sp
}
