package storetest

import (
	"context"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// RunAllowanceStore is the contract every sb.AllowanceStore passes: a
// grant is found for its agent, action and scope only, until it expires;
// a newer grant for the same place replaces the older; List shows the
// active ones, earliest expiry first; Revoke removes one, once.
func RunAllowanceStore(t *testing.T, newStore func(t *testing.T) sb.AllowanceStore) {
	ctx := context.Background()
	now := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	grant := func(id, agent, scope string, hours int) sb.Allowance {
		return sb.Allowance{ID: id, AgentID: agent, Tool: "Nextcloud", Action: "delete", Scope: scope,
			GrantedBy: "link", ApprovalID: "ap-" + id, Run: sb.RunContext{RunID: "r1", RootRunID: "r1", AgentID: agent},
			GrantedAt: now, ExpiresAt: now.Add(time.Duration(hours) * time.Hour)}
	}

	t.Run("found only for its agent, action and scope, until it expires", func(t *testing.T) {
		s := newStore(t)
		want := grant("al1", "hermes", "folder:/Reports/", 4)
		if err := s.Grant(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Find(ctx, "hermes", "Nextcloud", "delete", "folder:/Reports/", now.Add(time.Hour))
		if err != nil || !ok || got.ID != "al1" || got.GrantedBy != "link" || got.ApprovalID != "ap-al1" ||
			!got.ExpiresAt.Equal(want.ExpiresAt) || got.Run.RootRunID != "r1" {
			t.Fatalf("Find = %+v, %v, %v; want the grant", got, ok, err)
		}
		for _, c := range []struct{ agent, action, scope string }{
			{"apollo", "delete", "folder:/Reports/"},
			{"hermes", "share", "folder:/Reports/"},
			{"hermes", "delete", "folder:/Reports/2025/"},
		} {
			if _, ok, err := s.Find(ctx, c.agent, "Nextcloud", c.action, c.scope, now); ok || err != nil {
				t.Errorf("Find(%v) = %v, %v; want not found", c, ok, err)
			}
		}
		if _, ok, err := s.Find(ctx, "hermes", "Nextcloud", "delete", "folder:/Reports/", want.ExpiresAt); ok || err != nil {
			t.Errorf("Find at expiry = %v, %v; want not found", ok, err)
		}
	})

	t.Run("a newer grant for the same place replaces the older", func(t *testing.T) {
		s := newStore(t)
		if err := s.Grant(ctx, grant("old", "hermes", "room:general", 1)); err != nil {
			t.Fatal(err)
		}
		if err := s.Grant(ctx, grant("new", "hermes", "room:general", 24)); err != nil {
			t.Fatal(err)
		}
		got, ok, _ := s.Find(ctx, "hermes", "Nextcloud", "delete", "room:general", now)
		if !ok || got.ID != "new" {
			t.Errorf("Find = %+v, %v; want the newer grant", got, ok)
		}
		if _, err := s.Revoke(ctx, "old"); sb.ErrorCode(err) != sb.ENOTFOUND {
			t.Errorf("Revoke(replaced) = %v, want ENOTFOUND", err)
		}
	})

	t.Run("list shows the active ones, earliest expiry first; revoke once", func(t *testing.T) {
		s := newStore(t)
		for _, a := range []sb.Allowance{grant("b", "hermes", "room:b", 24), grant("a", "hermes", "room:a", 1), grant("c", "apollo", "room:c", 4)} {
			if err := s.Grant(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		list, err := s.List(ctx, now)
		if err != nil || len(list) != 3 || list[0].ID != "a" || list[1].ID != "c" || list[2].ID != "b" {
			t.Fatalf("List = %+v, %v; want a, c, b", list, err)
		}
		if list, _ := s.List(ctx, now.Add(2*time.Hour)); len(list) != 2 {
			t.Errorf("List after a's expiry = %+v, want c and b", list)
		}
		got, err := s.Revoke(ctx, "c")
		if err != nil || got.ID != "c" || got.Scope != "room:c" {
			t.Fatalf("Revoke = %+v, %v", got, err)
		}
		if _, ok, _ := s.Find(ctx, "apollo", "Nextcloud", "delete", "room:c", now); ok {
			t.Error("a revoked allowance is still found")
		}
		if _, err := s.Revoke(ctx, "c"); sb.ErrorCode(err) != sb.ENOTFOUND {
			t.Errorf("second Revoke = %v, want ENOTFOUND", err)
		}
	})

	t.Run("grant refuses an allowance without a scope", func(t *testing.T) {
		s := newStore(t)
		a := grant("x", "hermes", "", 1)
		if err := s.Grant(ctx, a); sb.ErrorCode(err) != sb.EINVALID {
			t.Errorf("Grant without scope = %v, want EINVALID", err)
		}
	})
}
