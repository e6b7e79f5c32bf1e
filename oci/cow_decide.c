/* The decision on a container's pending branches once it is gone (run
 * after it exits, delete after an engine reaped it).  A commit refused for
 * conflicts, or any failure, leaves the branch deferred: nothing is merged
 * without a decision. */
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "cow_branch.h"

static void
say (const struct oci_globals *g, const char *id, const char *dest,
     const char *what)
{
  _cleanup_free_ char *m
      = xasprintf ("container \"%s\": cow mount %s: %s", id, dest, what);
  oci_log_warning (g, m);
}

/* Applies |a| to one pending branch; true when it is gone (decided and
 * merged or dropped). */
static bool
apply (const struct oci_globals *g, const char *id,
       const struct oci_cow_ref *ref, enum oci_cow_action a, const char *why)
{
  struct cow_branch *b = NULL;
  struct cm_err *e = NULL;
  bool gone = false;
  if (cow_branch_open (ref->storage, &b, &e) < 0)
    {
      say (g, id, ref->dest, e->msg);
      cm_err_free (&e);
      return false;
    }
  if (b->state != COW_PENDING)
    ; /* decided before */
  else if (a == OCI_COW_ABORT)
    gone = cow_abort (b, &e) == 0;
  else if (cow_branch_set_state (b,
                                 a == OCI_COW_KEEP ? COW_KEPT : COW_DEFERRED,
                                 &e)
           == 0)
    {
      if (a == OCI_COW_COMMIT)
        gone = cow_commit (b, NULL, NULL, &e) == 0;
      /* a branch that stays leaves its quota tmpfs (docs/cow.md "Quota") */
      else if (cow_branch_persist (b, &e) == 0)
        {
          _cleanup_free_ char *m = xasprintf (
              "%s branch %s%s; decide with `sandlock-oci commit|abort %s`",
              a == OCI_COW_KEEP ? "kept" : "deferred", ref->storage, why, id);
          say (g, id, ref->dest, m);
        }
    }
  if (e)
    {
      _cleanup_free_ char *m = xasprintf (
          "%s failed, branch %s deferred: %s; see `sandlock-oci changes %s`",
          oci_cow_action_name (a), ref->storage, e->msg, id);
      say (g, id, ref->dest, m);
      cm_err_free (&e);
      if (a == OCI_COW_COMMIT) /* keep and defer tried already */
        oci_cow_persist (g, id, ref, b);
    }
  cow_branch_free (b);
  return gone;
}

void
oci_cow_persist (const struct oci_globals *g, const char *id,
                 const struct oci_cow_ref *ref, struct cow_branch *b)
{
  struct cm_err *e = NULL;
  if (b == NULL || !b->in_tmpfs || b->lost
      || (b->state != COW_KEPT && b->state != COW_DEFERRED))
    return;
  if (cow_branch_persist (b, &e) < 0)
    {
      _cleanup_free_ char *m = xasprintf (
          "branch %s stays on its quota tmpfs: %s", ref->storage, e->msg);
      say (g, id, ref->dest, m);
      cm_err_free (&e);
    }
}

void
oci_cow_record_exit (const struct oci_globals *g, const char *id, int code)
{
  struct oci_cow_record r;
  struct cm_err *e = NULL;
  if (oci_cow_record_load (g, id, &r, &e) == 0)
    {
      r.exit_code = code;
      oci_cow_record_save (g, id, &r, &e);
    }
  cm_err_free (&e);
  oci_cow_record_free (&r);
}

void
oci_cow_decide (const struct oci_globals *g, const char *id, int code)
{
  struct oci_cow_record r;
  struct cm_err *e = NULL;
  const char *why = "";
  if (oci_cow_record_load (g, id, &r, &e) != 0)
    {
      if (e)
        oci_log_warning (g, e->msg);
      cm_err_free (&e);
      oci_cow_record_free (&r);
      return;
    }
  if (code < 0)
    code = r.exit_code;
  enum oci_cow_action a = code == 0 ? r.on_exit : r.on_error;
  if (code < 0 && r.on_exit != r.on_error)
    {
      a = OCI_COW_DEFER;
      why = " (its exit status is unknown here: on_exit and on_error "
            "differ)";
    }
  for (size_t i = r.n; i-- > 0;)
    if (apply (g, id, &r.v[i], a, why))
      oci_cow_record_drop (&r, i);
  if (oci_cow_record_save (g, id, &r, &e) < 0)
    {
      oci_log_warning (g, e->msg);
      cm_err_free (&e);
    }
  oci_cow_record_free (&r);
}
