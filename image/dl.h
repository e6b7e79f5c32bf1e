/* libcurl, libarchive, libcrypto and the decompressors (ISA-L, zlib,
 * libzstd), loaded on first use.
 *
 * Linked directly, their dependency trees (libcurl alone pulls in ldap,
 * kerberos, ssh2, rtmp, idn2, brotli, ...) cost every sandlock-oci
 * process ~11 ms of dynamic loading -- more than a whole crun start --
 * though only the image commands use them.  So image/ calls them through
 * this table, filled by dlopen/dlsym the first time one is needed; the
 * binary is linked with --as-needed and does not load them otherwise.
 *
 * Include this after the libraries' own headers: it turns each function
 * name used in image/ into the table entry. */
#ifndef SANDLOCK_IMAGE_DL_H
#define SANDLOCK_IMAGE_DL_H

#define CURL_DISABLE_TYPECHECK 1
#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <isa-l/igzip_lib.h>
#include <zlib.h>
#include <zstd.h>

#define IMG_LIB_CURL 0
#define IMG_LIB_ARCHIVE 1
#define IMG_LIB_CRYPTO 2
#define IMG_LIB_ISAL 3
#define IMG_LIB_ZLIB 4
#define IMG_LIB_ZSTD 5
#define IMG_NLIBS 6

/* libarchive's entries apart: a static build fills them from its own
 * symbols (dl.c), and must not name any other library's, not even in dead
 * code -- unoptimized, that would link libcurl and the rest at startup. */
#define IMG_DL_ARCHIVE_LIST(X) \
  X (IMG_LIB_ARCHIVE, archive_read_new) \
  X (IMG_LIB_ARCHIVE, archive_read_support_format_tar) \
  X (IMG_LIB_ARCHIVE, archive_read_support_format_empty) \
  X (IMG_LIB_ARCHIVE, archive_read_open) \
  X (IMG_LIB_ARCHIVE, archive_read_next_header) \
  X (IMG_LIB_ARCHIVE, archive_read_data_block) \
  X (IMG_LIB_ARCHIVE, archive_read_free) \
  X (IMG_LIB_ARCHIVE, archive_error_string) \
  X (IMG_LIB_ARCHIVE, archive_errno) \
  X (IMG_LIB_ARCHIVE, archive_set_error) \
  X (IMG_LIB_ARCHIVE, archive_entry_pathname) \
  X (IMG_LIB_ARCHIVE, archive_entry_hardlink) \
  X (IMG_LIB_ARCHIVE, archive_entry_filetype) \
  X (IMG_LIB_ARCHIVE, archive_entry_symlink) \
  X (IMG_LIB_ARCHIVE, archive_entry_perm) \
  X (IMG_LIB_ARCHIVE, archive_entry_uid) \
  X (IMG_LIB_ARCHIVE, archive_entry_gid) \
  X (IMG_LIB_ARCHIVE, archive_entry_rdev) \
  X (IMG_LIB_ARCHIVE, archive_entry_mtime) \
  X (IMG_LIB_ARCHIVE, archive_entry_mtime_nsec) \
  X (IMG_LIB_ARCHIVE, archive_entry_size) \
  X (IMG_LIB_ARCHIVE, archive_entry_xattr_reset) \
  X (IMG_LIB_ARCHIVE, archive_entry_xattr_next)

#define IMG_DL_LIST(X) \
  X (IMG_LIB_CURL, curl_global_init) \
  X (IMG_LIB_CURL, curl_easy_init) \
  X (IMG_LIB_CURL, curl_easy_setopt) \
  X (IMG_LIB_CURL, curl_easy_perform) \
  X (IMG_LIB_CURL, curl_easy_getinfo) \
  X (IMG_LIB_CURL, curl_easy_cleanup) \
  X (IMG_LIB_CURL, curl_easy_strerror) \
  X (IMG_LIB_CURL, curl_easy_escape) \
  X (IMG_LIB_CURL, curl_free) \
  X (IMG_LIB_CURL, curl_slist_append) \
  X (IMG_LIB_CURL, curl_slist_free_all) \
  X (IMG_LIB_CURL, curl_share_init) \
  X (IMG_LIB_CURL, curl_share_setopt) \
  X (IMG_LIB_CURL, curl_share_cleanup) \
  IMG_DL_ARCHIVE_LIST (X) \
  X (IMG_LIB_CRYPTO, EVP_MD_CTX_new) \
  X (IMG_LIB_CRYPTO, EVP_DigestInit_ex) \
  X (IMG_LIB_CRYPTO, EVP_sha256) \
  X (IMG_LIB_CRYPTO, EVP_DigestUpdate) \
  X (IMG_LIB_CRYPTO, EVP_DigestFinal_ex) \
  X (IMG_LIB_CRYPTO, EVP_MD_CTX_free) \
  X (IMG_LIB_CRYPTO, EVP_EncodeBlock) \
  X (IMG_LIB_CRYPTO, EVP_DecodeBlock) \
  X (IMG_LIB_CRYPTO, EVP_MD_CTX_copy_ex) \
  X (IMG_LIB_ISAL, isal_inflate_init) \
  X (IMG_LIB_ISAL, isal_inflate_reset) \
  X (IMG_LIB_ISAL, isal_inflate) \
  X (IMG_LIB_ZLIB, inflateInit2_) \
  X (IMG_LIB_ZLIB, inflate) \
  X (IMG_LIB_ZLIB, inflateReset) \
  X (IMG_LIB_ZLIB, inflateEnd) \
  X (IMG_LIB_ZSTD, ZSTD_createDStream) \
  X (IMG_LIB_ZSTD, ZSTD_initDStream) \
  X (IMG_LIB_ZSTD, ZSTD_decompressStream) \
  X (IMG_LIB_ZSTD, ZSTD_isError) \
  X (IMG_LIB_ZSTD, ZSTD_getErrorName) \
  X (IMG_LIB_ZSTD, ZSTD_freeDStream)

struct img_dl
{
#define IMG_DL_MEMBER(lib, name) __typeof__ (name) *name;
  IMG_DL_LIST (IMG_DL_MEMBER)
#undef IMG_DL_MEMBER
};

/* The table, with library |lib| (IMG_LIB_*) loaded: each library is
 * loaded once, on its own first use, lazily bound (RTLD_LAZY: most of
 * their symbols are never called).  Separately, because a pull needs
 * libcurl before its first request but a decompressor only when the
 * first layer is unpacked; a pull of a cached image never loads it.
 * libarchive is static when the build found libarchive.a
 * (IMG_ARCHIVE_STATIC, Makefile): the shared one drags libxml2, ICU and
 * libstdc++ in, ~3.5 ms of loading.  A library that cannot be loaded ends the
 * process with a message, as the dynamic loader would have at exec. */
const struct img_dl *img_dl (int lib);
/* The same, or NULL when the library is not installed (for the optional
 * ones: ISA-L, whose absence falls back to zlib). */
const struct img_dl *img_dl_try (int lib);

#ifndef IMG_DL_NO_MACROS
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_share_setopt
#define curl_global_init (img_dl (IMG_LIB_CURL)->curl_global_init)
#define curl_easy_init (img_dl (IMG_LIB_CURL)->curl_easy_init)
#define curl_easy_setopt (img_dl (IMG_LIB_CURL)->curl_easy_setopt)
#define curl_easy_perform (img_dl (IMG_LIB_CURL)->curl_easy_perform)
#define curl_easy_getinfo (img_dl (IMG_LIB_CURL)->curl_easy_getinfo)
#define curl_easy_cleanup (img_dl (IMG_LIB_CURL)->curl_easy_cleanup)
#define curl_easy_strerror (img_dl (IMG_LIB_CURL)->curl_easy_strerror)
#define curl_easy_escape (img_dl (IMG_LIB_CURL)->curl_easy_escape)
#define curl_free (img_dl (IMG_LIB_CURL)->curl_free)
#define curl_slist_append (img_dl (IMG_LIB_CURL)->curl_slist_append)
#define curl_slist_free_all (img_dl (IMG_LIB_CURL)->curl_slist_free_all)
#define curl_share_init (img_dl (IMG_LIB_CURL)->curl_share_init)
#define curl_share_setopt (img_dl (IMG_LIB_CURL)->curl_share_setopt)
#define curl_share_cleanup (img_dl (IMG_LIB_CURL)->curl_share_cleanup)
#define archive_read_new (img_dl (IMG_LIB_ARCHIVE)->archive_read_new)
#define archive_read_support_format_tar (img_dl (IMG_LIB_ARCHIVE)->archive_read_support_format_tar)
#define archive_read_support_format_empty (img_dl (IMG_LIB_ARCHIVE)->archive_read_support_format_empty)
#define archive_read_open (img_dl (IMG_LIB_ARCHIVE)->archive_read_open)
#define archive_read_next_header (img_dl (IMG_LIB_ARCHIVE)->archive_read_next_header)
#define archive_read_data_block (img_dl (IMG_LIB_ARCHIVE)->archive_read_data_block)
#define archive_read_free (img_dl (IMG_LIB_ARCHIVE)->archive_read_free)
#define archive_error_string (img_dl (IMG_LIB_ARCHIVE)->archive_error_string)
#define archive_errno (img_dl (IMG_LIB_ARCHIVE)->archive_errno)
#define archive_set_error (img_dl (IMG_LIB_ARCHIVE)->archive_set_error)
#define archive_entry_pathname (img_dl (IMG_LIB_ARCHIVE)->archive_entry_pathname)
#define archive_entry_hardlink (img_dl (IMG_LIB_ARCHIVE)->archive_entry_hardlink)
#define archive_entry_filetype (img_dl (IMG_LIB_ARCHIVE)->archive_entry_filetype)
#define archive_entry_symlink (img_dl (IMG_LIB_ARCHIVE)->archive_entry_symlink)
#define archive_entry_perm (img_dl (IMG_LIB_ARCHIVE)->archive_entry_perm)
#define archive_entry_uid (img_dl (IMG_LIB_ARCHIVE)->archive_entry_uid)
#define archive_entry_gid (img_dl (IMG_LIB_ARCHIVE)->archive_entry_gid)
#define archive_entry_rdev (img_dl (IMG_LIB_ARCHIVE)->archive_entry_rdev)
#define archive_entry_mtime (img_dl (IMG_LIB_ARCHIVE)->archive_entry_mtime)
#define archive_entry_mtime_nsec (img_dl (IMG_LIB_ARCHIVE)->archive_entry_mtime_nsec)
#define archive_entry_size (img_dl (IMG_LIB_ARCHIVE)->archive_entry_size)
#define archive_entry_xattr_reset (img_dl (IMG_LIB_ARCHIVE)->archive_entry_xattr_reset)
#define archive_entry_xattr_next (img_dl (IMG_LIB_ARCHIVE)->archive_entry_xattr_next)
#define EVP_MD_CTX_new (img_dl (IMG_LIB_CRYPTO)->EVP_MD_CTX_new)
#define EVP_DigestInit_ex (img_dl (IMG_LIB_CRYPTO)->EVP_DigestInit_ex)
#define EVP_sha256 (img_dl (IMG_LIB_CRYPTO)->EVP_sha256)
#define EVP_DigestUpdate (img_dl (IMG_LIB_CRYPTO)->EVP_DigestUpdate)
#define EVP_DigestFinal_ex (img_dl (IMG_LIB_CRYPTO)->EVP_DigestFinal_ex)
#define EVP_MD_CTX_free (img_dl (IMG_LIB_CRYPTO)->EVP_MD_CTX_free)
#define EVP_EncodeBlock (img_dl (IMG_LIB_CRYPTO)->EVP_EncodeBlock)
#define EVP_DecodeBlock (img_dl (IMG_LIB_CRYPTO)->EVP_DecodeBlock)
#define EVP_MD_CTX_copy_ex (img_dl (IMG_LIB_CRYPTO)->EVP_MD_CTX_copy_ex)
#define isal_inflate_init (img_dl (IMG_LIB_ISAL)->isal_inflate_init)
#define isal_inflate_reset (img_dl (IMG_LIB_ISAL)->isal_inflate_reset)
#define isal_inflate (img_dl (IMG_LIB_ISAL)->isal_inflate)
#define inflateInit2_ (img_dl (IMG_LIB_ZLIB)->inflateInit2_)
#define inflate (img_dl (IMG_LIB_ZLIB)->inflate)
#define inflateReset (img_dl (IMG_LIB_ZLIB)->inflateReset)
#define inflateEnd (img_dl (IMG_LIB_ZLIB)->inflateEnd)
#define ZSTD_createDStream (img_dl (IMG_LIB_ZSTD)->ZSTD_createDStream)
#define ZSTD_initDStream (img_dl (IMG_LIB_ZSTD)->ZSTD_initDStream)
#define ZSTD_decompressStream (img_dl (IMG_LIB_ZSTD)->ZSTD_decompressStream)
#define ZSTD_isError (img_dl (IMG_LIB_ZSTD)->ZSTD_isError)
#define ZSTD_getErrorName (img_dl (IMG_LIB_ZSTD)->ZSTD_getErrorName)
#define ZSTD_freeDStream (img_dl (IMG_LIB_ZSTD)->ZSTD_freeDStream)
#endif

#endif
