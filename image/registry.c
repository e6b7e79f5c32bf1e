/* The docker:// transport: Docker Registry HTTP API v2 / OCI distribution
 * over libcurl.  HTTP/1.1 (faster than h2 for big blobs here, see
 * machine.md), one easy handle per request sharing DNS, TLS sessions and
 * connections through a share handle, auth on demand (Basic or Bearer from
 * the WWW-Authenticate challenge), retries with backoff, and Range resume
 * of a blob whose connection dropped: the sink sees every byte once. */
#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "image/priv.h"
#include "image/dl.h"

#define MAX_ATTEMPTS 5
#define ERRBODY_MAX 65536
/* Slower than this over the whole stall window counts as stalled: a body
 * trickling a few bytes a second must not hold a pull for ever. */
#define STALL_RATE 1024L

struct registry
{
  struct img_source base;
  char *what, *host, *repo, *scheme;
  bool verify, allow_http, switched;
  char *cainfo;                 /* SSL_CERT_FILE */
  char *ca_blob;                /* system CAs + --cert-dir *.crt */
  size_t ca_blob_len;
  char *client_cert, *client_key;
  char *userpass, *note;
  char *cred_source;            /* "--creds", "--authfile F", "auth file F" */
  long stall_s;                 /* --stall-timeout, seconds */
  uint64_t timeout_ms, deadline_ms; /* --timeout; CLOCK_MONOTONIC; 0: none */
  pthread_mutex_t mu;           /* authz, auth_gen, scheme */
  char *authz;                  /* full "Authorization: ..." header */
  unsigned auth_gen;
  CURLSH *share;
  pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
};

struct xfer
{
  CURL *h;
  long status;
  char *ctype, *wwwauth;
  long retry_after;
  img_sink_fn sink;
  void *sink_data;
  bool sink_failed, started;
  char *ebuf;
  size_t elen;
  bool ebuf_full;               /* error/token body over ERRBODY_MAX: aborted */
  uint64_t got, resumed_from, skip;
  char errbuf[CURL_ERROR_SIZE]; /* curl's own reason (TLS verification, ...) */
  long os_errno;                /* the socket's errno (connection refused) */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void
curl_init_once (void)
{
  img_dl (IMG_LIB_CURL);
  img_trace ("libcurl loaded");
  curl_global_init (CURL_GLOBAL_DEFAULT);
  img_trace ("curl_global_init done");
}

static void
share_lock (CURL *h, curl_lock_data d, curl_lock_access a, void *p)
{
  struct registry *r = p;
  pthread_mutex_lock (&r->locks[d]);
}

static void
share_unlock (CURL *h, curl_lock_data d, void *p)
{
  struct registry *r = p;
  pthread_mutex_unlock (&r->locks[d]);
}

static char *
header_value (const char *line, size_t n, const char *name)
{
  size_t l = strlen (name);
  const char *v, *e = line + n;
  if (n <= l || strncasecmp (line, name, l) != 0 || line[l] != ':')
    return NULL;
  v = line + l + 1;
  while (v < e && (*v == ' ' || *v == '\t'))
    v++;
  while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
    e--;
  return strndup (v, e - v);
}

static size_t
on_header (char *p, size_t sz, size_t n, void *ud)
{
  struct xfer *x = ud;
  size_t len = sz * n;
  char *v;
  if (len >= 5 && strncmp (p, "HTTP/", 5) == 0)
    {
      free (x->ctype);
      free (x->wwwauth);
      x->ctype = x->wwwauth = NULL;
      x->status = 0;
      x->retry_after = 0;
    }
  else if ((v = header_value (p, len, "content-type")))
    {
      free (x->ctype);
      x->ctype = v;
    }
  else if ((v = header_value (p, len, "www-authenticate")))
    {
      if (x->wwwauth == NULL)
        x->wwwauth = v;
      else
        free (v);
    }
  else if ((v = header_value (p, len, "retry-after")))
    {
      x->retry_after = strtol (v, NULL, 10);
      free (v);
    }
  return len;
}

static size_t
on_write (char *p, size_t sz, size_t n, void *ud)
{
  struct xfer *x = ud;
  size_t len = sz * n, d;
  if (x->status == 0)
    curl_easy_getinfo (x->h, CURLINFO_RESPONSE_CODE, &x->status);
  if (x->status < 200 || x->status >= 300 || x->sink == NULL)
    {
      /* An error or token body past the cap stops the transfer: an
       * endless one must not keep the pull running. */
      if (x->elen + len > ERRBODY_MAX)
        {
          x->ebuf_full = true;
          return 0;
        }
      x->ebuf = xrealloc (x->ebuf, x->elen + len + 1);
      memcpy (x->ebuf + x->elen, p, len);
      x->elen += len;
      x->ebuf[x->elen] = '\0';
      return len;
    }
  if (!x->started)
    {
      x->started = true;
      /* The server ignored our Range: drop what the sink already has. */
      x->skip = x->status == 200 ? x->resumed_from : 0;
    }
  d = x->skip < len ? x->skip : len;
  x->skip -= d;
  if (len > d && x->sink (x->sink_data, p + d, len - d) < 0)
    {
      x->sink_failed = true;
      return 0;
    }
  x->got += len - d;
  return len;
}

/* "HTTP 404 MANIFEST_UNKNOWN: manifest unknown" from the error body. */
static char *
registry_error (struct xfer *x)
{
  yajl_val v = NULL, errs;
  struct cm_err *e = NULL;
  char *r;
  if (x->ebuf && (v = cm_json_parse (x->ebuf, x->elen, IMG_MAX_MANIFEST, "error", &e)) != NULL
      && (errs = cm_json_get (v, "errors")) && YAJL_IS_ARRAY (errs)
      && errs->u.array.len > 0)
    {
      yajl_val e0 = errs->u.array.values[0];
      const char *code = cm_json_str (e0, "code"), *msg = cm_json_str (e0, "message");
      r = xasprintf ("HTTP %ld %s: %s", x->status, code ? code : "?", msg ? msg : "");
    }
  else
    r = xasprintf ("HTTP %ld", x->status);
  cm_err_free (&e);
  if (v)
    yajl_tree_free (v);
  return r;
}

static uint64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* Milliseconds left before --timeout; -1 without a deadline. */
static int64_t
remaining_ms (const struct registry *r)
{
  uint64_t now;
  if (r->deadline_ms == 0)
    return -1;
  now = now_ms ();
  return now >= r->deadline_ms ? 0 : (int64_t) (r->deadline_ms - now);
}

static void
backoff (const struct registry *r, int attempt, long retry_after)
{
  /* The registry protocol asks clients to back off on 429/503; this is a
   * retry delay, not polling for a state change. */
  long ms = 200L << attempt;
  int64_t left = remaining_ms (r);
  struct timespec ts;
  if (retry_after > 0 && retry_after <= 10)
    ms = retry_after * 1000;
  if (left >= 0 && ms > left)
    ms = (long) left;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

static bool
retryable_curl (CURLcode rc)
{
  switch (rc)
    {
    case CURLE_COULDNT_CONNECT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
    }
}

static void
setup_tls (struct registry *r, CURL *h)
{
  if (!r->verify)
    {
      curl_easy_setopt (h, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt (h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
  if (r->ca_blob)
    {
      struct curl_blob b = { r->ca_blob, r->ca_blob_len, CURL_BLOB_NOCOPY };
      curl_easy_setopt (h, CURLOPT_CAINFO_BLOB, &b);
    }
  else if (r->cainfo)
    curl_easy_setopt (h, CURLOPT_CAINFO, r->cainfo);
  if (r->client_cert && r->client_key)
    {
      curl_easy_setopt (h, CURLOPT_SSLCERT, r->client_cert);
      curl_easy_setopt (h, CURLOPT_SSLKEY, r->client_key);
    }
}

static CURL *
new_handle (struct registry *r, const char *url, struct xfer *x,
            struct curl_slist *hdrs)
{
  CURL *h = curl_easy_init ();
  int64_t left = remaining_ms (r);
  if (h == NULL)
    abort ();
  curl_easy_setopt (h, CURLOPT_URL, url);
  curl_easy_setopt (h, CURLOPT_SHARE, r->share);
  curl_easy_setopt (h, CURLOPT_HTTP_VERSION, (long) CURL_HTTP_VERSION_1_1);
  curl_easy_setopt (h, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt (h, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt (h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt (h, CURLOPT_PROTOCOLS_STR, "http,https");
  /* libcurl (>= 7.58) drops a custom Authorization header on a redirect
   * to another host, which is what blob storage redirects need. */
  curl_easy_setopt (h, CURLOPT_UNRESTRICTED_AUTH, 0L);
  curl_easy_setopt (h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt (h, CURLOPT_HEADERDATA, x);
  curl_easy_setopt (h, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt (h, CURLOPT_WRITEDATA, x);
  curl_easy_setopt (h, CURLOPT_BUFFERSIZE, 512L * 1024);
  curl_easy_setopt (h, CURLOPT_CONNECTTIMEOUT, r->stall_s);
  curl_easy_setopt (h, CURLOPT_LOW_SPEED_LIMIT, STALL_RATE);
  curl_easy_setopt (h, CURLOPT_LOW_SPEED_TIME, r->stall_s);
  if (left >= 0)
    curl_easy_setopt (h, CURLOPT_TIMEOUT_MS, (long) (left > 0 ? left : 1));
  x->errbuf[0] = '\0';
  curl_easy_setopt (h, CURLOPT_ERRORBUFFER, x->errbuf);
  curl_easy_setopt (h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (h, CURLOPT_USERAGENT, "sandlock-oci/" SANDLOCK_VERSION);
  curl_easy_setopt (h, CURLOPT_HTTPHEADER, hdrs);
  setup_tls (r, h);
  x->h = h;
  return h;
}

static int fetch_token (struct registry *r, const struct img_challenge *c,
                        struct cm_err **err);

static char *
fmt_duration (uint64_t ms)
{
  return ms % 1000 ? xasprintf ("%" PRIu64 "ms", ms) : xasprintf ("%" PRIu64 "s", ms / 1000);
}

static bool
deadline_passed (const struct registry *r)
{
  /* curl's own timer fired at the deadline: allow for the clock read. */
  return r->deadline_ms != 0 && remaining_ms (r) <= 10;
}

/* Why a transfer failed: what we cut short, which of our limits ran out,
 * or curl's own reason from its error buffer (the TLS verification
 * failure, "Could not resolve host: ...") rather than its generic text. */
static char *
transfer_error (const struct registry *r, CURLcode rc, const struct xfer *x)
{
  _cleanup_free_ char *d = NULL;
  const char *why = x->errbuf[0] ? x->errbuf : curl_easy_strerror (rc);
  if (x->ebuf_full)
    return xasprintf ("HTTP %ld: %s larger than %d bytes, transfer aborted", x->status,
                      x->sink ? "error body" : "response body", ERRBODY_MAX);
  if (rc == CURLE_OPERATION_TIMEDOUT && deadline_passed (r))
    {
      d = fmt_duration (r->timeout_ms);
      return xasprintf ("deadline exceeded: the pull took longer than --timeout %s (%s)", d,
                        why);
    }
  if (rc == CURLE_OPERATION_TIMEDOUT)
    return xasprintf ("stalled: %s (--stall-timeout %lds: less than %ld bytes/s)", why,
                      r->stall_s, STALL_RATE);
  if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE)
    return xasprintf ("%s (add the CA with --cert-dir, or --tls-verify=false)", why);
  if (rc == CURLE_COULDNT_CONNECT && x->os_errno > 0)
    return xasprintf ("%s (%s)", why, strerror ((int) x->os_errno));
  return xstrdup (why);
}

/* What to add to a 401/403 that came back although we authenticated. */
static char *
denied_hint (const struct registry *r)
{
  if (r->userpass)
    return xasprintf ("; the registry rejected the credentials of user `%.*s` (from %s)",
                      (int) strcspn (r->userpass, ":"), r->userpass, r->cred_source);
  return xasprintf ("; anonymous access was refused: if the repository is private, pass "
                    "--creds USER:PASS or --authfile FILE%s%s", r->note ? "; " : "",
                    r->note ? r->note : "");
}

/* Answers a 401: sets r->authz from the challenge.  |gen| is the auth
 * generation the failed request used; a newer one means another thread
 * already answered. */
static int
authenticate (struct registry *r, const char *wwwauth, unsigned gen,
              const char *status_msg, struct cm_err **err)
{
  struct img_challenge c;
  int ret = 0;
  pthread_mutex_lock (&r->mu);
  if (r->auth_gen != gen)
    goto out;
  if (wwwauth == NULL || img_challenge_parse (wwwauth, &c) < 0)
    {
      ret = cm_err_set (err, 0, "%s: %s (no usable WWW-Authenticate challenge)", r->what,
                        status_msg);
      goto out;
    }
  if (strcmp (c.scheme, "basic") == 0)
    {
      if (r->userpass == NULL)
        ret = cm_err_set (err, 0, "%s: %s: the registry wants credentials (--creds, "
                          "--authfile)%s%s", r->what, status_msg, r->note ? "; " : "",
                          r->note ? r->note : "");
      else
        {
          unsigned char *b = xmalloc (4 * strlen (r->userpass) / 3 + 8);
          EVP_EncodeBlock (b, (const unsigned char *) r->userpass, (int) strlen (r->userpass));
          free (r->authz);
          r->authz = xasprintf ("Authorization: Basic %s", b);
          free (b);
        }
    }
  else if (strcmp (c.scheme, "bearer") == 0 && c.realm)
    ret = fetch_token (r, &c, err);
  else
    ret = cm_err_set (err, 0, "%s: %s: unsupported auth scheme `%s`", r->what,
                      status_msg, c.scheme);
  img_challenge_clear (&c);
  if (ret == 0)
    r->auth_gen++;
out:
  pthread_mutex_unlock (&r->mu);
  return ret;
}

static int
fetch_token (struct registry *r, const struct img_challenge *c, struct cm_err **err)
{
  _cleanup_free_ char *scope = c->scope ? xstrdup (c->scope)
                                        : xasprintf ("repository:%s:pull", r->repo);
  _cleanup_free_ char *url = NULL;
  struct xfer x = { 0 };
  CURL *h;
  CURLcode rc;
  yajl_val v = NULL;
  const char *tok;
  char *es = NULL, *esc = NULL;
  int ret = 0;

  h = curl_easy_init ();
  es = curl_easy_escape (h, c->service ? c->service : "", 0);
  esc = curl_easy_escape (h, scope, 0);
  url = xasprintf ("%s%sservice=%s&scope=%s", c->realm,
                   strchr (c->realm, '?') ? "&" : "?", es, esc);
  curl_free (es);
  curl_free (esc);
  curl_easy_cleanup (h);
  if (!cm_startswith (url, "https://") && !(cm_startswith (url, "http://") && r->allow_http))
    return cm_err_set (err, 0, "%s: token realm `%s` is not https", r->what, c->realm);
  h = new_handle (r, url, &x, NULL);
  if (r->userpass)
    {
      curl_easy_setopt (h, CURLOPT_HTTPAUTH, (long) CURLAUTH_BASIC);
      curl_easy_setopt (h, CURLOPT_USERPWD, r->userpass);
    }
  /* No sink: the (small, capped) body lands in x.ebuf. */
  rc = curl_easy_perform (h);
  curl_easy_getinfo (h, CURLINFO_OS_ERRNO, &x.os_errno);
  if (x.status == 0)
    curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, &x.status);
  if (rc != CURLE_OK)
    {
      _cleanup_free_ char *m = transfer_error (r, rc, &x);
      ret = cm_err_set (err, 0, "%s: token request to %s: %s", r->what, url, m);
    }
  else
    {
      if (x.status != 200)
        {
          _cleanup_free_ char *m = registry_error (&x);
          _cleanup_free_ char *hint = NULL;
          if (x.status == 401 || x.status == 403)
            hint = denied_hint (r);
          else if (r->note)
            hint = xasprintf ("; %s", r->note);
          ret = cm_err_set (err, 0, "%s: token request to %s: %s%s", r->what, c->realm, m,
                            hint ? hint : "");
        }
      else if ((v = cm_json_parse (x.ebuf ? x.ebuf : "", x.elen, IMG_MAX_MANIFEST, "token response", err)) == NULL)
        ret = -1;
      else if ((tok = cm_json_str (v, "token")) == NULL
               && (tok = cm_json_str (v, "access_token")) == NULL)
        ret = cm_err_set (err, 0, "%s: token response without a token", r->what);
      else
        {
          free (r->authz);
          r->authz = xasprintf ("Authorization: Bearer %s", tok);
        }
    }
  if (v)
    yajl_tree_free (v);
  free (x.ebuf);
  free (x.ctype);
  free (x.wwwauth);
  curl_easy_cleanup (h);
  return ret;
}

/* The first request of a session may find the registry speaks the other
 * scheme: localhost registries are tried over plain HTTP first (loading
 * the system CAs for a TLS handshake costs more than the whole pull of a
 * small image), and move to HTTPS when the port speaks TLS; with
 * --tls-verify=false a remote registry is tried over HTTPS first and moves
 * to HTTP when the port does not speak TLS. */
static bool
switch_scheme (struct registry *r, CURLcode rc, struct xfer *x, int attempt)
{
  bool https_failed, http_failed;
  const char *to;
  if (attempt != 0 || x->got != 0 || r->switched)
    return false;
  https_failed = strcmp (r->scheme, "https") == 0 && rc == CURLE_SSL_CONNECT_ERROR;
  http_failed = strcmp (r->scheme, "http") == 0
                && (rc == CURLE_GOT_NOTHING || rc == CURLE_RECV_ERROR
                    || rc == CURLE_WEIRD_SERVER_REPLY
                    || (rc == CURLE_OK && x->status == 400 && x->ebuf
                        && strstr (x->ebuf, "HTTPS")));
  if (!https_failed && !http_failed)
    return false;
  to = https_failed ? "http" : "https";
  if (https_failed && !r->allow_http)
    return false;
  pthread_mutex_lock (&r->mu);
  free (r->scheme);
  r->scheme = xstrdup (to);
  r->switched = true;
  pthread_mutex_unlock (&r->mu);
  return true;
}

/* GET |path| on the registry.  With |resume|, a dropped transfer restarts
 * with Range from the bytes the sink has. */
static int
request (struct registry *r, const char *path, const char *accept,
         struct xfer *x, bool resume, struct cm_err **err)
{
  int auth_tries = 0;
  for (int attempt = 0;; attempt++)
    {
      struct curl_slist *hdrs = NULL;
      _cleanup_free_ char *url = NULL, *range = NULL, *authz = NULL;
      unsigned gen;
      CURLcode rc;
      CURL *h;

      pthread_mutex_lock (&r->mu);
      url = xasprintf ("%s://%s%s", r->scheme, r->host, path);
      authz = r->authz ? xstrdup (r->authz) : NULL;
      gen = r->auth_gen;
      pthread_mutex_unlock (&r->mu);
      if (r->deadline_ms && remaining_ms (r) == 0)
        {
          _cleanup_free_ char *d = fmt_duration (r->timeout_ms);
          return cm_err_set (err, 0, "%s: GET %s: deadline exceeded: the pull took "
                             "longer than --timeout %s", r->what, url, d);
        }
      if (accept)
        hdrs = curl_slist_append (hdrs, accept);
      if (authz)
        hdrs = curl_slist_append (hdrs, authz);
      x->resumed_from = x->got;
      x->started = false;
      x->status = 0;
      x->elen = 0;
      if (resume && x->got > 0)
        {
          range = xasprintf ("Range: bytes=%" PRIu64 "-", x->got);
          hdrs = curl_slist_append (hdrs, range);
        }
      h = new_handle (r, url, x, hdrs);
      rc = curl_easy_perform (h);
      curl_easy_getinfo (h, CURLINFO_OS_ERRNO, &x->os_errno);
      if (x->status == 0)
        curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, &x->status);
      curl_easy_cleanup (h);
      curl_slist_free_all (hdrs);
      if (x->sink_failed)
        return cm_err_set (err, ECANCELED, "%s: GET %s", r->what, path);
      if (switch_scheme (r, rc, x, attempt))
        {
          attempt--;
          continue;
        }
      if (rc != CURLE_OK)
        {
          _cleanup_free_ char *m = NULL;
          if (!x->ebuf_full && !deadline_passed (r) && retryable_curl (rc)
              && attempt + 1 < MAX_ATTEMPTS && (resume || x->got == 0))
            {
              backoff (r, attempt, 0);
              continue;
            }
          m = transfer_error (r, rc, x);
          return cm_err_set (err, 0, "%s: GET %s: %s", r->what, url, m);
        }
      if (x->status >= 200 && x->status < 300)
        return 0;
      if (x->status == 401 && auth_tries++ < 2)
        {
          _cleanup_free_ char *m = registry_error (x);
          if (authenticate (r, x->wwwauth, gen, m, err) < 0)
            return -1;
          attempt--;
          continue;
        }
      if ((x->status == 429 || x->status >= 500) && attempt + 1 < MAX_ATTEMPTS)
        {
          backoff (r, attempt, x->retry_after);
          continue;
        }
      {
        _cleanup_free_ char *m = registry_error (x);
        _cleanup_free_ char *hint = NULL;
        /* A 401/403 although we sent credentials or a token. */
        if ((x->status == 401 || x->status == 403) && authz)
          hint = denied_hint (r);
        else if (x->status == 401 && r->note)
          hint = xasprintf ("; %s", r->note);
        return cm_err_set (err, 0, "%s: GET %s: %s%s", r->what, path, m, hint ? hint : "");
      }
    }
}

static void
xfer_clear (struct xfer *x)
{
  free (x->ctype);
  free (x->wwwauth);
  free (x->ebuf);
}

struct capped
{
  char *b;
  size_t n;
};

static int
capped_sink (void *data, const void *buf, size_t len)
{
  struct capped *c = data;
  if (c->n + len > IMG_MAX_MANIFEST)
    return -1;
  c->b = xrealloc (c->b, c->n + len + 1);
  memcpy (c->b + c->n, buf, len);
  c->n += len;
  c->b[c->n] = '\0';
  return 0;
}

static int
reg_get_manifest (struct img_source *s, const char *ref, char **body,
                  size_t *len, char **media_type, struct cm_err **err)
{
  struct registry *r = (struct registry *) s;
  _cleanup_free_ char *path = xasprintf ("/v2/%s/manifests/%s", r->repo, ref);
  struct capped c = { 0 };
  struct xfer x = { .sink = capped_sink, .sink_data = &c };
  int ret = request (r, path,
                     "Accept: " MT_OCI_INDEX ", " MT_OCI_MANIFEST ", " MT_DOCKER_LIST
                     ", " MT_DOCKER_MANIFEST ", " MT_DOCKER_V1 "+prettyjws",
                     &x, false, err);
  if (ret == 0)
    {
      *body = c.b ? c.b : xstrdup ("");
      *len = c.n;
      *media_type = x.ctype ? strndup (x.ctype, strcspn (x.ctype, "; ")) : NULL;
    }
  else
    {
      free (c.b);
      if (x.sink_failed)
        {
          cm_err_free (err);
          ret = cm_err_set (err, 0, "%s: manifest larger than %u bytes", r->what,
                            IMG_MAX_MANIFEST);
        }
    }
  xfer_clear (&x);
  return ret;
}

static int
reg_get_blob (struct img_source *s, const struct img_desc *d, img_sink_fn sink,
              void *data, struct cm_err **err)
{
  struct registry *r = (struct registry *) s;
  _cleanup_free_ char *path = xasprintf ("/v2/%s/blobs/%s", r->repo, d->digest);
  struct xfer x = { .sink = sink, .sink_data = data };
  int ret = request (r, path, NULL, &x, true, err);
  xfer_clear (&x);
  return ret;
}

static void
reg_free (struct img_source *s)
{
  struct registry *r = (struct registry *) s;
  if (r == NULL)
    return;
  if (r->share)
    curl_share_cleanup (r->share);
  for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
    pthread_mutex_destroy (&r->locks[i]);
  pthread_mutex_destroy (&r->mu);
  free (r->what);
  free (r->host);
  free (r->repo);
  free (r->scheme);
  free (r->cainfo);
  free (r->ca_blob);
  free (r->client_cert);
  free (r->client_key);
  free (r->userpass);
  free (r->note);
  free (r->cred_source);
  free (r->authz);
  free (r);
}

static void
append_file (struct registry *r, int dfd, const char *name)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  struct cm_err *e = NULL;
  if (cm_read_file_at (dfd, name, 4u << 20, &buf, &len, &e) < 0)
    {
      cm_err_free (&e);
      return;
    }
  r->ca_blob = xrealloc (r->ca_blob, r->ca_blob_len + len + 2);
  memcpy (r->ca_blob + r->ca_blob_len, buf, len);
  r->ca_blob_len += len;
  r->ca_blob[r->ca_blob_len++] = '\n';
}

/* skopeo's --cert-dir: *.crt are CAs (added to the system ones), a
 * NAME.cert with NAME.key is a client certificate. */
static int
load_cert_dir (struct registry *r, const char *dir, struct cm_err **err)
{
  DIR *d = opendir (dir);
  struct dirent *de;
  const char *sys = getenv ("SSL_CERT_FILE");
  bool any = false;
  if (d == NULL)
    return cm_err_set (err, errno, "--cert-dir `%s`", dir);
  append_file (r, AT_FDCWD, sys && *sys ? sys : "/etc/ssl/certs/ca-certificates.crt");
  while ((de = readdir (d)))
    {
      size_t n = strlen (de->d_name);
      if (n > 4 && strcmp (de->d_name + n - 4, ".crt") == 0)
        {
          append_file (r, dirfd (d), de->d_name);
          any = true;
        }
      else if (n > 5 && strcmp (de->d_name + n - 5, ".cert") == 0)
        {
          free (r->client_cert);
          free (r->client_key);
          r->client_cert = xasprintf ("%s/%s", dir, de->d_name);
          r->client_key = xasprintf ("%s/%.*s.key", dir, (int) (n - 5), de->d_name);
        }
    }
  closedir (d);
  if (!any)
    {
      free (r->ca_blob);
      r->ca_blob = NULL;
      r->ca_blob_len = 0;
    }
  return 0;
}

/* "localhost", 127.0.0.0/8 or [::1], with an optional port; not a name
 * that merely starts like one ("localhost.example", "127.example"). */
static bool
is_localhost (const char *host)
{
  _cleanup_free_ char *h = xstrdup (host);
  struct in_addr a;
  char *colon;
  if (cm_startswith (h, "[::1]"))
    return h[5] == '\0' || h[5] == ':';
  colon = strchr (h, ':');
  if (colon)
    *colon = '\0';
  if (strcmp (h, "localhost") == 0)
    return true;
  return inet_pton (AF_INET, h, &a) == 1 && (ntohl (a.s_addr) >> 24) == 127;
}

int
img_registry_open (const struct img_opts *o, const struct img_ref *ref,
                   const char *what, struct img_source **out, struct cm_err **err)
{
  struct registry *r = xcalloc (1, sizeof *r);
  const char *sys = getenv ("SSL_CERT_FILE");
  int found;

  pthread_once (&curl_once, curl_init_once);
  r->base.get_manifest = reg_get_manifest;
  r->base.get_blob = reg_get_blob;
  r->base.free = reg_free;
  r->what = xstrdup (what);
  r->base.what = r->what;
  r->host = xstrdup (ref->registry);
  r->repo = xstrdup (ref->repository);
  r->verify = o->tls_verify != 0;
  r->allow_http = !r->verify || is_localhost (r->host);
  r->scheme = xstrdup (is_localhost (r->host) ? "http" : "https");
  pthread_mutex_init (&r->mu, NULL);
  for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
    pthread_mutex_init (&r->locks[i], NULL);
  r->share = curl_share_init ();
  curl_share_setopt (r->share, CURLSHOPT_LOCKFUNC, share_lock);
  curl_share_setopt (r->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
  curl_share_setopt (r->share, CURLSHOPT_USERDATA, r);
  curl_share_setopt (r->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt (r->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  curl_share_setopt (r->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  if (sys && *sys)
    r->cainfo = xstrdup (sys);
  if (o->cert_dir && load_cert_dir (r, o->cert_dir, err) < 0)
    goto fail;
  if (o->creds)
    {
      if (strchr (o->creds, ':') == NULL)
        {
          cm_err_set (err, 0, "--creds: expected user:password");
          goto fail;
        }
      r->userpass = xstrdup (o->creds);
      r->cred_source = xstrdup ("--creds");
    }
  else
    {
      found = img_auth_lookup (o->authfile, r->host, &r->userpass, &r->note, err);
      if (found < 0)
        goto fail;
      if (o->authfile)
        r->cred_source = xasprintf ("--authfile %s", o->authfile);
      else if (found)
        {
          _cleanup_free_ char *p = img_auth_default_path ();
          r->cred_source = xasprintf ("auth file %s", p ? p : "?");
        }
    }
  r->stall_s = o->stall_timeout_ms ? (long) ((o->stall_timeout_ms + 999) / 1000) : 30;
  r->timeout_ms = o->timeout_ms;
  r->deadline_ms = o->timeout_ms ? now_ms () + o->timeout_ms : 0;
  *out = &r->base;
  return 0;
fail:
  reg_free (&r->base);
  return -1;
}
