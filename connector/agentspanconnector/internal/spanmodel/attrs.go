// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package spanmodel

import (
	"maps"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/xpdata"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// attrBuilder collects the attributes of one span or span event, in order,
// and moves them into its map at once (into). pcommon.Map's Put methods
// scan the map for the key on every call and grow it one attribute at a
// time; most of a span's keys are constants known to be distinct, which
// add appends without a scan. set keeps Put's semantics for a key that may
// be there already (one an event's attributes brought): it takes the new
// value in the place the key has. One builder serves a whole mapping: it
// is empty again after into.
type attrBuilder struct {
	list []attr
	mb   xpdata.MapBuilder
	// keys is scratch for sorting a map's keys.
	keys []string
}

// attr is one attribute collected, its value by kind.
type attr struct {
	key  string
	kind attrKind
	str  string
	num  int64
	dbl  float64
	raw  any      // attrRaw: an event attribute's value
	strs []string // attrStrs
}

type attrKind uint8

const (
	attrStr attrKind = iota
	attrInt
	attrDouble
	attrBool
	attrRaw
	attrStrs
)

// add appends k, which no attribute before it has.
func (b *attrBuilder) add(a attr) { b.list = append(b.list, a) }

// set puts k as pcommon.Map.Put would: in place when an attribute before it
// has the key, appended otherwise.
func (b *attrBuilder) set(a attr) {
	for i := range b.list {
		if b.list[i].key == a.key {
			b.list[i] = a
			return
		}
	}
	b.list = append(b.list, a)
}

func strAttr(k, v string) attr            { return attr{key: k, kind: attrStr, str: v} }
func intAttr(k string, v int64) attr      { return attr{key: k, kind: attrInt, num: v} }
func doubleAttr(k string, v float64) attr { return attr{key: k, kind: attrDouble, dbl: v} }
func rawAttr(k string, v any) attr        { return attr{key: k, kind: attrRaw, raw: v} }

// trueAttr is a boolean attribute set to true: the flags a span carries
// only when they hold.
func trueAttr(k string) attr {
	return attr{key: k, kind: attrBool, num: 1}
}

// addStr adds k when v is not empty (putStr).
func (b *attrBuilder) addStr(k, v string) {
	if v != "" {
		b.add(strAttr(k, v))
	}
}

// sortedKeys returns m's keys in order, in the builder's scratch (valid
// until the next call).
func (b *attrBuilder) sortedKeys(m map[string]any) []string {
	b.keys = slices.AppendSeq(b.keys[:0], maps.Keys(m))
	slices.Sort(b.keys)
	return b.keys
}

// into moves the attributes collected into m, which is empty, and empties
// the builder.
func (b *attrBuilder) into(m pcommon.Map) {
	b.mb.EnsureCapacity(len(b.list))
	for i := range b.list {
		a := &b.list[i]
		v := b.mb.AppendEmpty(a.key)
		switch a.kind {
		case attrStr:
			v.SetStr(a.str)
		case attrInt:
			v.SetInt(a.num)
		case attrDouble:
			v.SetDouble(a.dbl)
		case attrBool:
			v.SetBool(a.num != 0)
		case attrRaw:
			agentevent.SetValue(v, a.raw)
		case attrStrs:
			s := v.SetEmptySlice()
			s.EnsureCapacity(len(a.strs))
			for _, f := range a.strs {
				s.AppendEmpty().SetStr(f)
			}
		}
	}
	b.mb.UnsafeIntoMap(m)
	clear(b.list)
	b.list = b.list[:0]
}
