// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// An agent's own OpenTelemetry (its native log events and spans) reaches
// agentotel over OTLP. The agent_native processor lifts each record out of
// pdata into a NativeRecord or NativeSpan, so that the per-agent mappings in
// internal/vendors stay pure and free of collector packages, as the file
// parsers are.

// AttrOrigin marks an event or span built from an agent's own telemetry
// (OriginNative). Events read from session files carry no origin.
const (
	AttrOrigin   = "agent.origin"
	OriginNative = "otlp"
)

// AttrNativeTraceID, on an event mapped from a native log record, is the
// trace id the record carried (hex): the agent's own trace of the turn.
const AttrNativeTraceID = "agent.native.trace_id"

// AttrNativeCovered, set (true) on an event by agent_native, says that the
// agent's own spans already cover the turn the event belongs to: agent_span
// builds no second trace from it. Every other consumer still counts it.
const AttrNativeCovered = "agent.native.covered"

// ErrNativeUnmapped is wrapped by a per-agent mapping's error for a record of
// its agent that it cannot map (unknown event name, missing session id,
// malformed required field); the processor counts and logs it once.
var ErrNativeUnmapped = errors.New("native record not mapped")

// AttrChatDurationMs, on an event of a model call, is the call's duration as
// the agent stated it: agent_span starts the chat span that long before its
// end (a native record arrives once, at the end of the call).
const AttrChatDurationMs = "agent.chat.duration_ms"

// NativeRecord is one log record of an agent's own telemetry.
type NativeRecord struct {
	// Service and ServiceVersion are the resource's service.name and
	// service.version; Scope is the instrumentation scope name.
	Service        string
	ServiceVersion string
	Scope          string
	// Name is the event name as the agent sent it (event.name, else the
	// record's event name, else a string body).
	Name string
	// Time is the record's time, else its observed time.
	Time time.Time
	// TraceID and SpanID are hex, "" when the record carried none.
	TraceID string
	SpanID  string
	// Attrs are the record's attributes; values are string, bool, int64,
	// float64, []any or map[string]any, as they arrived on the wire.
	Attrs map[string]any
	// Resource holds the resource attributes, same value types.
	Resource map[string]any
}

// NativeSpan is one span of an agent's own telemetry.
type NativeSpan struct {
	Service        string
	ServiceVersion string
	Scope          string
	Name           string
	// Kind is the OTLP span kind number (1 internal, 2 server, 3 client, ...).
	Kind         int
	TraceID      string
	SpanID       string
	ParentSpanID string
	Start, End   time.Time
	Attrs        map[string]any
	Events       []NativeSpanEvent
	// StatusError is true when the span's status is Error.
	StatusError   bool
	StatusMessage string
}

// NativeSpanEvent is one event of a NativeSpan.
type NativeSpanEvent struct {
	Name  string
	Time  time.Time
	Attrs map[string]any
}

// SpanPatch is how a per-agent span normalizer asks agent_native to change a
// native span in place.
type SpanPatch struct {
	// Name replaces the span name when not empty.
	Name string
	// Kind replaces the span kind when not 0.
	Kind int
	// Set adds or replaces attributes (string, bool, int64, float64, []string).
	Set map[string]any
	// Remove deletes attributes.
	Remove []string
	// Error sets the span status to Error with ErrorMessage.
	Error        bool
	ErrorMessage string
	// SessionID is the session the span belongs to ("" when it names none):
	// the key of the one-session-one-source rule.
	SessionID string
	// Source is the agent.
	Source Source
}

// Str returns the attribute k as a string: a string as is, a number or bool
// in its decimal form; "" when absent.
func (r *NativeRecord) Str(k string) string { return NativeStr(r.Attrs[k]) }

// Int returns the attribute k as an integer, accepting int, double (when
// whole) and decimal string.
func (r *NativeRecord) Int(k string) (int64, bool) { return NativeInt(r.Attrs[k]) }

// Float returns the attribute k as a float, accepting int, double and
// decimal string.
func (r *NativeRecord) Float(k string) (float64, bool) { return NativeFloat(r.Attrs[k]) }

// Bool returns the attribute k as a bool, accepting bool and the strings
// "true"/"false" (any case).
func (r *NativeRecord) Bool(k string) (value, ok bool) { return NativeBool(r.Attrs[k]) }

// NativeStr is the string form of a native attribute value.
func NativeStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// NativeInt reads an integer sent as int, whole double or decimal string
// (agents send some numbers as strings, some as Display-formatted text).
func NativeInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) && math.Abs(x) < 1<<63 {
			return int64(x), true
		}
	case string:
		s := strings.TrimSpace(x)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			return int64(f), true
		}
	}
	return 0, false
}

// NativeFloat reads a number sent as int, double or decimal string.
func NativeFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return x, true
		}
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, true
		}
	}
	return 0, false
}

// NativeBool reads a boolean sent as bool or as the string "true"/"false".
func NativeBool(v any) (value, ok bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// NativeID derives a stable event id for a native record from the parts
// that identify it (agent, session, the record's own keys): the same record
// sent twice gets the same id.
func NativeID(parts ...string) string {
	h := sha256.New()
	h.Write([]byte("otlp"))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
