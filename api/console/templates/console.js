// The console works without script; this only adds what a page is better with. Served from the
// console's own origin (the Content-Security-Policy allows no inline script).
//
// Copy buttons (<button class="copy" data-copy="..." hidden>) are shown and copy their value to the
// clipboard. Without script they stay hidden, and the value beside them (class="copyable") is
// selected whole by one click, ready for Ctrl+C.
(function () {
  function label(b, text) {
    b.textContent = text;
    setTimeout(function () { b.textContent = 'Copy'; }, 2000);
  }
  function selectBeside(b) {
    var code = b.previousElementSibling;
    if (!code) return;
    var range = document.createRange();
    range.selectNodeContents(code);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
  document.addEventListener('DOMContentLoaded', function () {
    document.querySelectorAll('button.copy').forEach(function (b) { b.hidden = false; });
  });
  document.addEventListener('click', function (ev) {
    var b = ev.target.closest('button.copy');
    if (!b) return;
    var text = b.getAttribute('data-copy');
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () { label(b, 'Copied'); },
        function () { selectBeside(b); label(b, 'Selected: press Ctrl+C'); });
    } else {
      selectBeside(b);
      label(b, 'Selected: press Ctrl+C');
    }
  });
})();
