// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package state

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/storagecodec"
)

// Storage layout. Everything is written as it changes, in one batch per
// ConsumeLogs call or tick that changed something, after the spans it produced were handed on:
//
//	agent_span/index/<n>        the active sessions (open units, events
//	                            waiting for a prompt, unresolved links)
//	                            whose key hashes to shard n (of
//	                            IndexShards), read back at start; a batch
//	                            rewrites only the shards whose sessions
//	                            became active or inactive
//	agent_span/anchors          the anchors (bounded list)
//	agent_span/s/<agent>/<id>   one session (SessionRecord)
//	agent_span/e/<unit>/<i>     event i of an open unit, written once;
//	                            deleted when the unit is emitted
const (
	KeyPrefix  = "agent_span/"
	keyIndex   = KeyPrefix + "index"
	KeyAnchors = KeyPrefix + "anchors"
)

// IndexShards is how many records the index of active sessions is split
// into. A history read for the first time has thousands of active
// sessions at once; one record listing them all, rewritten (and sorted)
// whenever a session became active or inactive, would cost a backfill more
// than the rest of the connector's state.
const IndexShards = storagecodec.IndexShards

// IndexShardKey is the storage key of shard n of the index.
func IndexShardKey(n int) string { return keyIndex + "/" + strconv.Itoa(n) }

// ShardOf is the index shard of a session.
func ShardOf(sk spanmodel.SessKey) int { return storagecodec.Shard(string(sk.Source), sk.Session) }

// SessionKey is the storage key of a session's record.
func SessionKey(sk spanmodel.SessKey) string {
	return KeyPrefix + "s/" + string(sk.Source) + "/" + sk.Session
}

// EventKey is the storage key of event i of an open unit.
func EventKey(k spanmodel.UnitKey, i int) string { return UnitEventKeys(k).Key(i) }

// EventKeys names the saved events of one open unit: Key(i) is
// EventKey(k, i), with the unit's hash taken once for all of its events.
type EventKeys struct{ prefix string }

// UnitEventKeys returns the keys of the events of unit k.
func UnitEventKeys(k spanmodel.UnitKey) EventKeys {
	var buf [256]byte
	b := buf[:0]
	for _, s := range [...]string{string(k.Thread.Source), k.Thread.Session, k.Thread.Agent, k.Prompt} {
		b = append(b, s...)
		b = append(b, 0)
	}
	sum := sha256.Sum256(b)
	const prefix = KeyPrefix + "e/"
	key := make([]byte, 0, len(prefix)+24+1)
	key = append(key, prefix...)
	key = hex.AppendEncode(key, sum[:12])
	key = append(key, '/')
	return EventKeys{prefix: string(key)}
}

// Key is the storage key of event i.
func (e EventKeys) Key(i int) string { return e.prefix + strconv.Itoa(i) }

// EncodeEvents writes events, in order, as one protobuf plog.Logs.
func EncodeEvents(evs []agentevent.Event) ([]byte, error) {
	var enc EventEncoder
	return enc.Encode(evs)
}

// EventEncoder is EncodeEvents for many values in a row: the plog.Logs the
// events are put into is made once, and emptied for each value.
type EventEncoder struct {
	logs plog.Logs
	lrs  plog.LogRecordSlice
}

// Encode is EncodeEvents(evs).
func (e *EventEncoder) Encode(evs []agentevent.Event) ([]byte, error) {
	if e.logs == (plog.Logs{}) {
		e.logs = plog.NewLogs()
		e.lrs = e.logs.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	}
	// Fresh records (Encode sets only what an event has): the bytes are
	// those of a plog.Logs made for these events alone.
	e.lrs.RemoveIf(func(plog.LogRecord) bool { return true })
	e.lrs.EnsureCapacity(len(evs))
	for i := range evs {
		agentevent.Encode(evs[i], e.lrs.AppendEmpty())
	}
	var m plog.ProtoMarshaler
	return m.MarshalLogs(e.logs)
}

// DecodeEvents reads events written by EncodeEvents.
func DecodeEvents(b []byte) ([]agentevent.Event, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var u plog.ProtoUnmarshaler
	logs, err := u.UnmarshalLogs(b)
	if err != nil {
		return nil, fmt.Errorf("saved state: decode events: %w", err)
	}
	evs, skipped := agentevent.DecodeLogs(logs)
	if skipped > 0 {
		return nil, fmt.Errorf("saved state: %d records are not agent events", skipped)
	}
	return evs, nil
}
