#include "json.h"

void
cm_json_write_str (FILE *f, const char *s)
{
  if (s == NULL)
    {
      fputs ("null", f);
      return;
    }
  fputc ('"', f);
  for (; *s; s++)
    {
      unsigned char ch = (unsigned char) *s;
      if (ch == '"' || ch == '\\')
        fprintf (f, "\\%c", ch);
      else if (ch == '\n')
        fputs ("\\n", f);
      else if (ch < 0x20)
        fprintf (f, "\\u%04x", ch);
      else
        fputc (ch, f);
    }
  fputc ('"', f);
}
