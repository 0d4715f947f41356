// The search page: under each result, about 240 characters of that page's text around the first
// word of the query found in it, from PAGE_TEXT (page_text.js, written by docs/_ext/search_text.py).
// Sphinx would fetch each page for this, which a browser refuses for pages opened from the files.
"use strict";
(() => {
  const WIDTH = 240;
  const BEFORE = 80;                        // characters shown before the word
  const words = (new URLSearchParams(window.location.search).get("q") || "")
    .toLowerCase().split(/\s+/).filter((word) => word);

  /** The text around the first of the query's words in it (its start if none), with "..." where cut. */
  const around = (text) => {
    const lower = text.toLowerCase();
    const found = words.map((word) => lower.indexOf(word)).filter((at) => at >= 0);
    const start = found.length ? Math.max(0, Math.min(...found) - BEFORE) : 0;
    const end = Math.min(text.length, start + WIDTH);
    return (start > 0 ? "..." : "") + text.slice(start, end) + (end < text.length ? "..." : "");
  };

  /** Give each result that has no summary its summary, as text (never parsed as HTML). */
  const summarise = () => {
    for (const result of document.querySelectorAll("#search-results li")) {
      const link = result.querySelector("a[href]");
      if (!link || result.querySelector("p.context")) continue;
      const page = link.getAttribute("href").split("#")[0];      // docname + ".html", as searchtools.js links it
      const docname = page.slice(0, page.length - DOCUMENTATION_OPTIONS.LINK_SUFFIX.length);
      if (!(docname in PAGE_TEXT)) continue;
      const summary = document.createElement("p");
      summary.className = "context";
      summary.textContent = around(PAGE_TEXT[docname]);
      if (typeof _highlightText === "function")      // sphinx_highlight.js: the query's words marked, as in the titles
        words.forEach((word) => _highlightText(summary, word, "highlighted"));
      result.appendChild(summary);
    }
  };

  new MutationObserver(summarise).observe(document.body, { childList: true, subtree: true });
})();
