#!/usr/bin/env python3
"""lesson_manifest.py — the page's list of the shipped lessons (make web; issue 39).

    python3 src/web/lesson_manifest.py OUT LESSON.json...

The page's attnviz.data holds only the default lesson; the others are fetched when
opened (web.js). The picker (O) still lists them all from this manifest, which picker.c
reads (PICKER_MANIFEST_FILE): for each lesson its file name, its "title" exactly as the
lesson file writes it (a string, or {"en": …, "zh": …}: read by the same lesson_read_text
as the lesson itself), its size in bytes and the first 16 hex digits of its SHA-256 (web.js
fetches lessons/NAME.json?v=SHA, so a changed lesson is a new address: no stale copy from
an HTTP cache or from the service worker's cache of an older version).
A file that is not a JSON object with a title: one line naming it, exit 1, OUT not written.
"""
import hashlib
import json
import os
import sys


def entry(path):
    with open(path, 'rb') as f:
        data = f.read()
    try:
        lesson = json.loads(data)
    except ValueError as e:
        raise SystemExit(f'lesson_manifest: {path}: not JSON ({e})')
    if not isinstance(lesson, dict) or not isinstance(lesson.get('title'), (str, dict)):
        raise SystemExit(f'lesson_manifest: {path}: title: missing; expected a string or {{"en": ..., "zh": ...}}')
    return {'file': os.path.basename(path), 'title': lesson['title'], 'bytes': len(data),
            'sha256': hashlib.sha256(data).hexdigest()[:16]}


def main(argv):
    if len(argv) < 3:
        raise SystemExit('usage: lesson_manifest.py OUT LESSON.json...')
    out, files = argv[1], sorted(argv[2:], key=os.path.basename)
    text = json.dumps({'lessons': [entry(p) for p in files]}, ensure_ascii=False, indent=1) + '\n'
    with open(out + '.tmp', 'w', encoding='utf-8') as f:
        f.write(text)
    os.replace(out + '.tmp', out)


if __name__ == '__main__':
    main(sys.argv)
