// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"cmp"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
)

// The assembler's keys are the span model's: a unit's ids are hashed from
// them (internal/spanmodel).
type (
	sessKey   = spanmodel.SessKey
	threadKey = spanmodel.ThreadKey
	unitKey   = spanmodel.UnitKey
	callKey   = spanmodel.CallKey
)

func compareSessions(x, y sessKey) int {
	return compareThreads(threadKey{Source: x.Source, Session: x.Session}, threadKey{Source: y.Source, Session: y.Session})
}

func compareThreads(x, y threadKey) int {
	return cmp.Or(cmp.Compare(x.Source, y.Source), cmp.Compare(x.Session, y.Session), cmp.Compare(x.Agent, y.Agent))
}

func compareUnits(x, y unitKey) int {
	return cmp.Or(compareThreads(x.Thread, y.Thread), cmp.Compare(x.Prompt, y.Prompt))
}
