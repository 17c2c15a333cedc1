/* reportgen's calculator: the estimates of `reportgen estimate` and `reportgen plan`
 * computed in the browser, with the same formulas as the Python core
 * (reportgen/stats/estimate.py and planner.py), so that both agree to 1e-9.
 *
 * jStat (bundled above this script) gives the normal quantile and the starting
 * point for every Student-t quantile. Its t quantile is only good to about 1e-8,
 * so each one is finished with Newton steps on the exact Student-t CDF, which for
 * a whole number of degrees of freedom is a finite sum (Abramowitz and Stegun
 * 26.7.3 and 26.7.4). From 10,000 degrees of freedom on, the Cornish-Fisher
 * series in 1/df (A&S 26.7.5, four terms) is exact to about 1e-15 instead.
 *
 * Nothing here throws on bad input: every form checks its fields and says what
 * is wrong next to the field.
 */
(function () {
  "use strict";

  var jStat = window.jStat;
  var SEARCH_CAP = 1e9;
  var MAX_COUNT = 1e9;
  var MAX_K = 1e6;
  var MAX_TASKS = 10000;
  var MIN_LEVEL = 1e-6;
  var MAX_LEVEL = 0.999999999999;
  var POWER = 0.8;
  var CORNISH_FISHER_DF = 10000;

  // ------------------------------------------------------------ quantiles

  /** z such that a standard normal falls in [-z, z] with probability `level`. */
  function normalQuantile(level) {
    return jStat.normal.inv(1 - (1 - level) / 2, 0, 1);
  }

  /** P(|T| <= t) for Student's t with a whole number df of degrees of freedom. */
  function twoSidedT(t, df) {
    var r = df + t * t;
    var sin = t / Math.sqrt(r);
    var cos2 = df / r;
    var sum = 1;
    var carry = 0; // Kahan summation: up to 5,000 terms
    var term = 1;
    var j, y, s;
    if (df % 2 === 0) {
      for (j = 1; j <= (df - 2) / 2; j++) {
        term *= (cos2 * (2 * j - 1)) / (2 * j);
        y = term - carry;
        s = sum + y;
        carry = s - sum - y;
        sum = s;
      }
      return sin * sum;
    }
    var theta = Math.atan(t / Math.sqrt(df));
    if (df === 1) {
      return (2 / Math.PI) * theta;
    }
    for (j = 1; j <= (df - 3) / 2; j++) {
      term *= (cos2 * (2 * j)) / (2 * j + 1);
      y = term - carry;
      s = sum + y;
      carry = s - sum - y;
      sum = s;
    }
    return (2 / Math.PI) * (theta + sin * Math.sqrt(cos2) * sum);
  }

  /** t > 0 with P(|T| <= t) = level, for df degrees of freedom. */
  function tTwoSided(level, df) {
    if (level <= 0) {
      return 0;
    }
    if (df === 1) {
      return 1 / Math.tan((Math.PI * (1 - level)) / 2);
    }
    if (df === 2) {
      return level * Math.sqrt(2 / ((1 - level) * (1 + level)));
    }
    var p = 1 - (1 - level) / 2;
    if (df >= CORNISH_FISHER_DF) {
      var x = jStat.normal.inv(p, 0, 1);
      var x2 = x * x;
      var g1 = (x * (x2 + 1)) / 4;
      var g2 = (x * ((5 * x2 + 16) * x2 + 3)) / 96;
      var g3 = (x * (((3 * x2 + 19) * x2 + 17) * x2 - 15)) / 384;
      var g4 = (x * ((((79 * x2 + 776) * x2 + 1482) * x2 - 1920) * x2 - 945)) / 92160;
      return x + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df;
    }
    var t = jStat.studentt.inv(p, df);
    for (var i = 0; i < 8; i++) {
      var step = (twoSidedT(t, df) - level) / (2 * jStat.studentt.pdf(t, df));
      t -= step;
      if (!(Math.abs(step) > 2e-16 * t)) {
        break;
      }
    }
    return t;
  }

  /** The Student-t quantile at probability p (one-sided), as scipy's stdtrit(df, p). */
  function tQuantile(p, df) {
    return p >= 0.5 ? tTwoSided(2 * p - 1, df) : -tTwoSided(1 - 2 * p, df);
  }

  // ------------------------------------------------------------ one task

  function power(x, oneMinusX, k) {
    var logX = x >= 0.5 ? Math.log1p(-oneMinusX) : Math.log(x);
    return Math.exp(k * logX);
  }

  /** prod_{i < factors} (top - i) / (bottom - i), as the core multiplies it.
   *
   * Every factor lies in [0, 1], so once the product has underflowed to 0 it stays
   * 0 and the loop stops: with a million factors that saves nearly all the work.
   */
  function fallingRatio(top, bottom, factors) {
    var out = 1;
    for (var i = 0; i < factors && out !== 0; i++) {
      out *= (top - i) / (bottom - i);
    }
    return out;
  }

  /** C(c, k) / C(n, k) with min(k, n - c) factors; null where k > n. */
  function unbiasedPassHatK(c, n, k) {
    if (k > n) {
      return null;
    }
    if (c < k) {
      return 0;
    }
    var failures = n - c;
    return k <= failures ? fallingRatio(c, n, k) : fallingRatio(n - k, n, failures);
  }

  /** 1 - C(n - c, k) / C(n, k) with min(k, c) factors; null where k > n. */
  function passAtK(c, n, k) {
    if (k > n) {
      return null;
    }
    var failures = n - c;
    if (failures < k) {
      return 1;
    }
    var allFail = k <= c ? fallingRatio(failures, n, k) : fallingRatio(n - k, n, c);
    return 1 - allFail;
  }

  /** Every per-task number, shaped like a task of `reportgen estimate --format json`. */
  function estimateTask(c, n, k, level, z) {
    if (z === undefined) {
      z = normalQuantile(level);
    }
    var p = c / n;
    var q = (n - c) / n;
    var a = (z * z) / (2 * n);
    var zs = z * Math.sqrt((p * q) / n + a / (2 * n));
    var scale = 1 + 2 * a;
    var low = (p * p) / (p + a + zs);
    var high = 1 - (q * q) / (q + a + zs);
    var oneMinusLow = (q + a + zs) / scale;
    var oneMinusHigh = (q * q) / (q + a + zs);
    return {
      successes: c,
      runs: n,
      pass_rate: { estimate: p, low: low, high: high },
      pass_hat_k: {
        plugin: {
          estimate: power(p, q, k),
          low: power(low, oneMinusLow, k),
          high: power(high, oneMinusHigh, k),
        },
        unbiased: unbiasedPassHatK(c, n, k),
      },
      pass_at_k: passAtK(c, n, k),
    };
  }

  // ------------------------------------------------------------ a suite

  /** mean +- t * sd / sqrt(T), clamped to [0, 1]; nulls as the core gives them. */
  function meanWithT(values, level) {
    var count = values.length;
    var none = { estimate: null, low: null, high: null, sd: null, t: null, df: Math.max(count - 1, 0) };
    if (count === 0) {
      return none;
    }
    var total = 0;
    for (var i = 0; i < count; i++) {
      if (values[i] === null) {
        return none;
      }
      total += values[i];
    }
    var mean = total / count;
    if (count < 2) {
      return { estimate: mean, low: null, high: null, sd: null, t: null, df: 0 };
    }
    var squares = 0;
    for (var j = 0; j < count; j++) {
      squares += (values[j] - mean) * (values[j] - mean);
    }
    var sd = Math.sqrt(squares / (count - 1));
    var t = tTwoSided(level, count - 1);
    var half = (t * sd) / Math.sqrt(count);
    return {
      estimate: mean,
      low: Math.min(Math.max(mean - half, 0), 1),
      high: Math.min(Math.max(mean + half, 0), 1),
      sd: sd,
      t: t,
      df: count - 1,
    };
  }

  /** `reportgen estimate --suite ... --no-coverage --format json`, as an object. */
  function estimateSuite(pairs, k, level) {
    var z = normalQuantile(level);
    var tasks = [];
    var plugin = [];
    var unbiased = [];
    var short = 0;
    for (var i = 0; i < pairs.length; i++) {
      var task = estimateTask(pairs[i][0], pairs[i][1], k, level, z);
      tasks.push(task);
      plugin.push(task.pass_hat_k.plugin.estimate);
      unbiased.push(task.pass_hat_k.unbiased);
      if (pairs[i][1] < k) {
        short += 1;
      }
    }
    var defined = short === 0;
    // As the core: where some tasks (not all) have fewer than k runs, the unbiased
    // reliability@k over the tasks that have k.
    var partial = null;
    if (short > 0 && short < pairs.length) {
      var kept = [];
      for (var m = 0; m < pairs.length; m++) {
        if (pairs[m][1] >= k) {
          kept.push(unbiased[m]);
        }
      }
      partial = meanWithT(kept, level);
      partial.tasks = kept.length;
    }
    return {
      k: k,
      confidence: level,
      tasks: tasks,
      reliability_at_k: {
        tasks: pairs.length,
        headline: defined ? "unbiased" : "plugin",
        headline_interval: defined ? "unbiased_t" : "plugin_t",
        headline_reason: defined
          ? "it has no bias by construction"
          : "the unbiased estimate is undefined: it needs k runs of every task",
        // Measured only by a coverage check, which the calculator does not run.
        headline_uncalibrated: null,
        plugin: meanWithT(plugin, level),
        unbiased: meanWithT(unbiased, level),
        unbiased_partial: partial,
        // Decided from a coverage check, which the calculator does not run.
        supported: null,
      },
      short_tasks: short,
    };
  }

  // ------------------------------------------------------------ the planner

  /** The smallest m >= start with passes(m), for a monotone predicate; null past the cap. */
  function smallest(passes, start) {
    if (passes(start)) {
      return start;
    }
    var lo = start;
    var hi = start;
    while (!passes(hi)) {
      if (hi >= SEARCH_CAP) {
        return null;
      }
      lo = hi;
      hi = Math.min(2 * hi, SEARCH_CAP);
    }
    while (hi - lo > 1) {
      var mid = Math.floor((lo + hi) / 2);
      if (passes(mid)) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    return hi;
  }

  function wilsonHalfwidth(n, passRate, z) {
    return (z / (n + z * z)) * Math.sqrt(passRate * (1 - passRate) * n + (z * z) / 4);
  }

  function suiteHalfwidth(tasks, sd, level) {
    return (tTwoSided(level, tasks - 1) * sd) / Math.sqrt(tasks);
  }

  /** `reportgen plan --format json`, as an object (null counts past the search cap). */
  function plan(target, level, passRate, taskSd, correlation, tasks) {
    var z = normalQuantile(level);
    var runs = smallest(function (n) {
      return wilsonHalfwidth(n, passRate, z) <= target;
    }, 1);
    var needed = smallest(function (t) {
      return suiteHalfwidth(t, taskSd, level) <= target;
    }, 2);
    var forTasks = tasks === null || tasks === undefined ? needed : tasks;
    var detectable = null;
    if (forTasks !== null) {
      var sdDifference = taskSd * Math.sqrt(2 * (1 - correlation));
      var df = forTasks - 1;
      var multiplier = tTwoSided(level, df) + tQuantile(POWER, df);
      detectable = {
        power: POWER,
        correlation: correlation,
        tasks: forTasks,
        sd_difference: sdDifference,
        value: (multiplier * sdDifference) / Math.sqrt(forTasks),
      };
    }
    return {
      target_halfwidth: target,
      confidence: level,
      pass_rate: passRate,
      task_sd: taskSd,
      runs_per_task: runs,
      tasks: needed,
      detectable_difference: detectable,
    };
  }

  // ------------------------------------------------------------ reading fields

  var WHOLE = /^\s*\d+\s*$/;
  // A number as the command line reads one (a sign, an exponent); its range is
  // checked apart, so that -0.1 is told it is out of range, not that it is no number.
  var NUMBER = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

  function wholeNumber(text, name, minimum, maximum) {
    if (!WHOLE.test(text)) {
      if (/^\s*-\s*\d+\s*$/.test(text)) {  // a whole number, but below zero
        return { error: name + " must be at least " + minimum + "." };
      }
      return { error: name + " must be a whole number, for example " + minimum + "." };
    }
    var value = parseInt(text, 10);
    if (value < minimum) {
      return { error: name + " must be at least " + minimum + "." };
    }
    if (value > maximum) {
      return { error: name + " must be at most " + maximum.toLocaleString("en") + "." };
    }
    return { value: value };
  }

  function fraction(text, name, openLow, openHigh) {
    if (!NUMBER.test(text)) {
      return { error: name + " must be a number, for example 0.5." };
    }
    var value = parseFloat(text);
    var lowOk = openLow ? value > 0 : value >= 0;
    var highOk = openHigh ? value < 1 : value <= 1;
    if (!(lowOk && highOk)) {
      var range = (openLow ? "(" : "[") + "0, 1" + (openHigh ? ")" : "]");
      return { error: name + " must lie in " + range + ", got " + text.trim() + "." };
    }
    return { value: value };
  }

  function confidenceLevel(text) {
    if (!NUMBER.test(text)) {
      return { error: "The level must be a number strictly between 0 and 1, for example 0.95." };
    }
    var value = parseFloat(text);
    if (!(value > 0 && value < 1)) {
      return { error: "The level must lie strictly between 0 and 1, got " + text.trim() + "." };
    }
    if (value < MIN_LEVEL) {
      return { error: "The level is too close to 0 to compute intervals; use at least 0.000001." };
    }
    if (value > MAX_LEVEL) {
      return { error: "The level is too close to 1; use at most 0.999999999999." };
    }
    return { value: value };
  }

  /** c/n pairs, one per line or separated by spaces or commas; errors name the line. */
  function parseSuite(text) {
    var lines = String(text).split(/\r\n|\r|\n/);
    var pairs = [];
    for (var i = 0; i < lines.length; i++) {
      var items = lines[i].split(/[\s,;]+/).filter(function (s) {
        return s !== "";
      });
      for (var j = 0; j < items.length; j++) {
        var where = "Line " + (i + 1) + ": ";
        var match = /^(\d+)\/(\d+)$/.exec(items[j]);
        if (!match) {
          return { error: where + "\u201c" + clip(items[j]) + "\u201d is not successes/runs (for example 16/20)." };
        }
        var c = parseInt(match[1], 10);
        var n = parseInt(match[2], 10);
        if (n < 1) {
          return { error: where + items[j] + " has no runs; runs must be at least 1." };
        }
        if (n > MAX_COUNT) {
          return { error: where + clip(items[j]) + " has more than 1,000,000,000 runs." };
        }
        if (c > n) {
          return { error: where + items[j] + " has more successes than runs." };
        }
        pairs.push([c, n]);
        if (pairs.length > MAX_TASKS) {
          return { error: where + "more than " + MAX_TASKS.toLocaleString("en") + " tasks; use reportgen estimate for a suite this large." };
        }
      }
    }
    if (pairs.length === 0) {
      return { error: "Give at least one task as successes/runs, for example 16/20." };
    }
    return { value: pairs };
  }

  function clip(text) {
    return text.length > 40 ? text.slice(0, 40) + "\u2026" : text;
  }

  // ------------------------------------------------------------ writing results

  function fixed(value) {
    return value === null || value === undefined || isNaN(value) ? "n/a" : value.toFixed(3);
  }

  function percent(level) {
    return String(parseFloat((level * 100).toPrecision(10))) + "%";
  }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    var key;
    for (key in attrs || {}) {
      if (Object.prototype.hasOwnProperty.call(attrs, key)) {
        node.setAttribute(key, attrs[key]);
      }
    }
    (children || []).forEach(function (child) {
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  /** A number cell: three decimals shown, the full value in data-value for the curious. */
  function num(key, value) {
    var attrs = { class: "num", "data-key": key };
    attrs["data-value"] = value === null ? "null" : String(value);
    if (value !== null) {
      attrs.title = String(value);
    }
    return el("td", attrs, [fixed(value)]);
  }

  function bracket(low, high) {
    return low === null || high === null ? "[n/a]" : "[" + fixed(low) + ", " + fixed(high) + "]";
  }

  function table(caption, head, rows) {
    // A wide table scrolls inside its wrapper, which the keyboard can reach.
    return el("div", { class: "table-wrap", role: "region", tabindex: "0", "aria-label": caption }, [
      el("table", {}, [
        el("caption", {}, [caption]),
        el("thead", {}, [el("tr", {}, head.map(function (h, i) {
          return el("th", { scope: "col", class: i ? "num" : "" }, [h]);
        }))]),
        el("tbody", {}, rows),
      ]),
    ]);
  }

  function row(label, cells) {
    return el("tr", {}, [el("th", { scope: "row" }, [label])].concat(cells));
  }

  function replace(region, nodes) {
    while (region.firstChild) {
      region.removeChild(region.firstChild);
    }
    nodes.forEach(function (node) {
      region.appendChild(node);
    });
  }

  /**
   * The same numbers from the command line: the whole command, however many tasks it
   * lists, alone in a box of its own, so that it can be selected (a triple click) and
   * pasted. It wraps between words (never inside one: a browser would break --runs
   * after its dashes), and a very long one scrolls inside its box, which the keyboard
   * can reach.
   */
  function terminal(command) {
    var words = [];
    command.split(" ").forEach(function (word, i) {
      if (i) {
        words.push(" ");
      }
      words.push(el("span", { class: "word" }, [word]));
    });
    return el("div", { class: "terminal" }, [
      el("p", { class: "meta" }, ["In a terminal:"]),
      el("pre", { class: "command", tabindex: "0" }, [el("code", {}, words)]),
    ]);
  }

  function falling(top, k) {
    var parts = [];
    for (var i = 0; i < Math.min(k, top + 1); i++) {
      parts.push(String(top - i));
    }
    return parts.join("\u00b7");
  }

  function taskResult(c, n, k, level) {
    var z = normalQuantile(level);
    var r = estimateTask(c, n, k, level, z);
    var pr = r.pass_rate;
    var pl = r.pass_hat_k.plugin;
    var lv = percent(level);
    var nodes = [
      table("One task: " + c + " of " + n + " run" + (n === 1 ? "" : "s") + " passed, k = " + k + ", intervals at " + lv,
        ["Quantity", "Estimate", "Low", "High"], [
          row("single-run pass rate p\u0302", [num("pass_rate.estimate", pr.estimate), num("pass_rate.low", pr.low), num("pass_rate.high", pr.high)]),
          row("pass^" + k + " plug-in", [num("pass_hat_k.plugin.estimate", pl.estimate), num("pass_hat_k.plugin.low", pl.low), num("pass_hat_k.plugin.high", pl.high)]),
          row("pass^" + k + " unbiased", [num("pass_hat_k.unbiased", r.pass_hat_k.unbiased), el("td", { class: "num" }, ["\u2013"]), el("td", { class: "num" }, ["\u2013"])]),
          row("pass@" + k, [num("pass_at_k", r.pass_at_k), el("td", { class: "num" }, ["\u2013"]), el("td", { class: "num" }, ["\u2013"])]),
        ]),
    ];
    var z2n = (z * z) / n;
    var p = pr.estimate;
    var centre = (p + z2n / 2) / (1 + z2n);
    var halfWidth = (z / (1 + z2n)) * Math.sqrt((p * (1 - p)) / n + z2n / (4 * n));
    var steps = [
      "Pass rate: p\u0302 = c / n = " + c + " / " + n + " = " + fixed(p) + ".",
      "Wilson interval at " + lv + ", with z = " + fixed(z) + ": centre (p\u0302 + z\u00b2/2n) / (1 + z\u00b2/n) = " + fixed(centre) +
        ", half-width z/(1 + z\u00b2/n) \u00b7 \u221a(p\u0302(1 \u2212 p\u0302)/n + z\u00b2/4n\u00b2) = " + fixed(halfWidth) + ", so " + bracket(pr.low, pr.high) + ".",
      "Plug-in pass^" + k + " = p\u0302^" + k + " = " + fixed(p) + "^" + k + " = " + fixed(pl.estimate) +
        "; its interval raises both Wilson bounds to the power " + k + ": " + bracket(pl.low, pl.high) + ".",
    ];
    if (r.pass_hat_k.unbiased === null) {
      steps.push("Unbiased pass^" + k + " and pass@" + k + " need at least k = " + k + " runs; this task has " + n + ", so both are undefined.");
    } else if (k <= 8 && n <= 10000) {
      steps.push("Unbiased pass^" + k + " = C(" + c + ", " + k + ") / C(" + n + ", " + k + ") = (" + falling(c, k) + ") / (" + falling(n, k) + ") = " +
        fixed(r.pass_hat_k.unbiased) + ": " + (k === 1 ? "the chance that one of these runs, drawn at random, passed."
          : "the chance that " + k + " of these runs, drawn without replacement, all passed."));
      steps.push("pass@" + k + " = 1 \u2212 C(" + (n - c) + ", " + k + ") / C(" + n + ", " + k + ") = 1 \u2212 (" +
        falling(n - c, k) + ") / (" + falling(n, k) + ") = " + fixed(r.pass_at_k) +
        ": " + (k === 1 ? "the same chance, as one run is all there is to pass." : "the chance that at least one of " + k + " such runs passed."));
    } else {
      steps.push("Unbiased pass^" + k + " = C(" + c + ", " + k + ") / C(" + n + ", " + k + ") = " + fixed(r.pass_hat_k.unbiased) +
        ", computed as a product of ratios rather than huge binomials.");
      steps.push("pass@" + k + " = 1 \u2212 C(" + (n - c) + ", " + k + ") / C(" + n + ", " + k + ") = " + fixed(r.pass_at_k) + ".");
    }
    nodes.push(el("ol", { class: "calc" }, steps.map(function (s) {
      return el("li", {}, [s]);
    })));
    nodes.push(terminal("reportgen estimate --successes " + c + " --runs " + n + " -k " + k + " --confidence " + level));
    return nodes;
  }

  function intervalCells(prefix, r) {
    return [num(prefix + ".estimate", r.estimate), num(prefix + ".low", r.low), num(prefix + ".high", r.high),
      num(prefix + ".sd", r.sd), num(prefix + ".t", r.t), el("td", { class: "num", "data-key": prefix + ".df", "data-value": String(r.df) }, [String(r.df)])];
  }

  function suiteResult(pairs, k, level) {
    var s = estimateSuite(pairs, k, level);
    var rel = s.reliability_at_k;
    var lv = percent(level);
    var lead = rel[rel.headline];
    var name = rel.headline === "unbiased" ? "unbiased" : "plug-in";
    var nodes = [
      el("p", { class: "headline-note" }, [
        "reliability@" + k + " (" + name + ", which the calculator leads with, as " + rel.headline_reason + ") = " + fixed(lead.estimate) +
          (lead.low === null ? " (an interval needs at least two tasks)" : ", " + lv + " interval " + bracket(lead.low, lead.high)) +
          ", over " + pairs.length + " task" + (pairs.length === 1 ? "" : "s") + ".",
      ]),
      table("reliability@" + k + " over " + pairs.length + " task" + (pairs.length === 1 ? "" : "s") +
          ", Student-t intervals at " + lv,
        ["Estimator", "Estimate", "Low", "High", "sd", "t", "df"], [
          row("plug-in", intervalCells("plugin", rel.plugin)),
          row("unbiased", intervalCells("unbiased", rel.unbiased)),
        ].concat(rel.unbiased_partial ? [
          row("unbiased over the " + rel.unbiased_partial.tasks + " tasks with k runs",
            intervalCells("unbiased_partial", rel.unbiased_partial)),
        ] : [])),
    ];
    var notes = [];
    if (s.short_tasks) {
      var fewest = Math.min.apply(null, pairs.map(function (p) { return p[1]; }));
      var supported = 2 * s.short_tasks > pairs.length && fewest >= 1 && fewest < k
        ? " With k = " + fewest + ", the most runs every task has, every task has its unbiased values."
        : "";
      notes.push(s.short_tasks + (s.short_tasks === 1 ? " task has" : " tasks have") + " fewer than k = " + k +
        " runs, so the unbiased reliability@" + k + " over the whole suite is undefined and the plug-in one leads" +
        (rel.unbiased_partial
          ? " here (a report also takes the unbiased value over the " + rel.unbiased_partial.tasks +
            " tasks with k runs, and leads with it where its coverage check finds that interval closest to its level)."
          : ".") + supported);
    }
    if (pairs.length > 1 && rel.plugin.sd === 0 && (rel.unbiased.sd === 0 || rel.unbiased.sd === null)) {
      notes.push((pairs.length === 2 ? "Both" : "All " + pairs.length) + " tasks have the same pass^" + k + ", so the intervals across tasks have zero width: " +
        "that says the tasks' estimates coincide, not that reliability@" + k + " is known exactly.");
    }
    var every = pairs.every(function (p) { return p[0] === p[1]; }) ? "passed"
      : pairs.every(function (p) { return p[0] === 0; }) ? "failed" : null;
    if (pairs.length < 2) {
      notes.push("One task only: the suite interval needs at least two tasks.");
    } else if (every) {
      notes.push("Every run of every task " + every + ": a report built from such results runs no coverage check, " +
        "as every suite simulated from them would be the same.");
    } else {
      notes.push("A report built from result files also runs a coverage check (simulated suites like this one) and leads with the estimate whose interval kept its level better; run the command below to see it.");
    }
    notes.forEach(function (text) {
      nodes.push(el("p", { class: "note" }, [text]));
    });
    var list = pairs.map(function (p) {
      return p[0] + "/" + p[1];
    }).join(" ");
    nodes.push(terminal("reportgen estimate --suite " + list + " -k " + k + " --confidence " + level));
    return nodes;
  }

  function planResult(target, level, passRate, taskSd, correlation, tasks) {
    var r = plan(target, level, passRate, taskSd, correlation, tasks);
    var lv = percent(level);
    var nodes = [];
    function count(key, value) {
      return el("td", { class: "num", "data-key": key, "data-value": value === null ? "null" : String(value) },
        [value === null ? "over 1,000,000,000" : value.toLocaleString("en")]);
    }
    var rows = [
      row("runs per task (Wilson, pass rate " + passRate + ")", [count("runs_per_task", r.runs_per_task)]),
      row("tasks (Student t, task sd " + taskSd + ")", [count("tasks", r.tasks)]),
    ];
    if (r.detectable_difference) {
      var d = r.detectable_difference;
      var cell = num("detectable_difference.value", d.value);
      if (d.value > 1) {
        // Two pass^k values differ by at most 1: as `reportgen plan` says, none is detected.
        cell.textContent = "none, not even the largest possible (1)";
      }
      rows.push(row("smallest difference a paired comparison on " + d.tasks.toLocaleString("en") + " tasks detects (80% power)", [cell]));
    }
    nodes.push(table("To pin an estimate to within \u00b1" + target + " at " + lv, ["Question", "Answer"], rows));
    if (r.tasks === null || r.runs_per_task === null) {
      nodes.push(el("p", { class: "note" }, ["The target half-width is too small to reach with fewer than 1,000,000,000 runs or tasks."]));
    }
    nodes.push(terminal("reportgen plan --target-halfwidth " + target + " --pass-rate " + passRate + " --task-sd " + taskSd +
      " --correlation " + correlation + (tasks === null ? "" : " --tasks " + tasks) + " --confidence " + level));
    return nodes;
  }

  // ------------------------------------------------------------ the page

  function field(id) {
    return document.getElementById(id);
  }

  /** Show or clear a field's message; returns the parsed value or undefined. */
  function check(id, result) {
    var input = field(id);
    var message = field(id + "-error");
    if (result.error) {
      input.setAttribute("aria-invalid", "true");
      message.textContent = result.error;
      return undefined;
    }
    input.removeAttribute("aria-invalid");
    message.textContent = "";
    return result.value;
  }

  function setLink(id, params) {
    var query = Object.keys(params).map(function (key) {
      return encodeURIComponent(key) + "=" + encodeURIComponent(params[key]);
    }).join("&");
    var link = field(id);
    link.setAttribute("href", "?" + query);
    try {
      window.history.replaceState(null, "", "?" + query + window.location.hash);
    } catch (error) {
      // Some browsers refuse to change a file:// address; the link above still works.
    }
  }

  function invalid(region, text, linkId) {
    replace(region, [el("p", { class: "note" }, [text])]);
    // The link would name a result no longer shown: it stays plain text until one is.
    field(linkId).removeAttribute("href");
  }

  function updateTask(writeUrl) {
    var region = field("task-result");
    var c = check("task-c", wholeNumber(field("task-c").value, "Successes c", 0, MAX_COUNT));
    var n = check("task-n", wholeNumber(field("task-n").value, "Runs n", 1, MAX_COUNT));
    var k = check("task-k", wholeNumber(field("task-k").value, "k", 1, MAX_K));
    var level = check("task-level", confidenceLevel(field("task-level").value));
    if (c !== undefined && n !== undefined && c > n) {
      c = check("task-c", { error: "Successes c (" + c + ") cannot exceed runs n (" + n + ")." });
    }
    if (c === undefined || n === undefined || k === undefined || level === undefined) {
      invalid(region, "Fix the marked field to see the estimates.", "task-link");
      return;
    }
    replace(region, taskResult(c, n, k, level));
    if (writeUrl) {
      setLink("task-link", { c: c, n: n, k: k, level: level });
    }
  }

  function updateSuite(writeUrl) {
    var region = field("suite-result");
    var pairs = check("suite-list", parseSuite(field("suite-list").value));
    var k = check("suite-k", wholeNumber(field("suite-k").value, "k", 1, MAX_K));
    var level = check("suite-level", confidenceLevel(field("suite-level").value));
    if (pairs === undefined || k === undefined || level === undefined) {
      invalid(region, "Fix the marked field to see reliability@k.", "suite-link");
      return;
    }
    replace(region, suiteResult(pairs, k, level));
    if (writeUrl) {
      setLink("suite-link", {
        suite: pairs.map(function (p) {
          return p[0] + "/" + p[1];
        }).join(" "),
        k: k,
        level: level,
      });
    }
  }

  function updatePlan(writeUrl) {
    var region = field("plan-result");
    var target = check("plan-target", fraction(field("plan-target").value, "The half-width", true, true));
    var passRate = check("plan-pass", fraction(field("plan-pass").value, "The pass rate", false, false));
    var taskSd = check("plan-sd", fraction(field("plan-sd").value, "The task sd", false, false));
    var rhoText = field("plan-rho").value;
    var rho = check("plan-rho", !NUMBER.test(rhoText)
      ? { error: "The correlation must be a number between -1 and 1, for example 0.7." }
      : Math.abs(parseFloat(rhoText)) <= 1
        ? { value: parseFloat(rhoText) }
        : { error: "The correlation must lie in [-1, 1], got " + rhoText.trim() + "." });
    var tasksText = field("plan-tasks").value;
    var tasks = tasksText.trim() === "" ? check("plan-tasks", { value: null })
      : check("plan-tasks", wholeNumber(tasksText, "Tasks", 2, MAX_COUNT));
    var level = check("plan-level", confidenceLevel(field("plan-level").value));
    if (target === undefined || passRate === undefined || taskSd === undefined || rho === undefined ||
        tasks === undefined || level === undefined) {
      invalid(region, "Fix the marked field to see the plan.", "plan-link");
      return;
    }
    replace(region, planResult(target, level, passRate, taskSd, rho, tasks));
    if (writeUrl) {
      var params = { target: target, pass: passRate, sd: taskSd, rho: rho, level: level };
      if (tasks !== null) {
        params.tasks = tasks;
      }
      setLink("plan-link", params);
    }
  }

  /**
   * Fill the fields from the address (calculator.html?c=16&n=20&k=3&level=0.95).
   *
   * k and level are shared by the forms, so they go to the forms the address is about:
   * the task's for c and n, the suite's for suite, the plan's for its own keys. A bad k
   * in a suite's link then marks the suite's field alone, not the other forms too. An
   * address with none of those keys (k or level alone) fills every form with the field.
   */
  function readAddress() {
    var params = {};
    window.location.search.replace(/^\?/, "").split("&").forEach(function (part) {
      if (!part) {
        return;
      }
      var cut = part.indexOf("=");
      var key = cut < 0 ? part : part.slice(0, cut);
      var value = cut < 0 ? "" : part.slice(cut + 1);
      try {
        params[decodeURIComponent(key)] = decodeURIComponent(value.replace(/\+/g, " "));
      } catch (error) {
        // A damaged address leaves the field as it was.
      }
    });
    var forms = [
      { own: { c: "task-c", n: "task-n" }, shared: { k: "task-k", level: "task-level" } },
      { own: { suite: "suite-list" }, shared: { k: "suite-k", level: "suite-level" } },
      {
        own: { target: "plan-target", pass: "plan-pass", sd: "plan-sd", rho: "plan-rho", tasks: "plan-tasks" },
        shared: { level: "plan-level" },
      },
    ];
    function given(key) {
      return Object.prototype.hasOwnProperty.call(params, key);
    }
    var named = forms.filter(function (form) {
      return Object.keys(form.own).some(given);
    });
    (named.length ? named : forms).forEach(function (form) {
      [form.own, form.shared].forEach(function (fields) {
        Object.keys(fields).filter(given).forEach(function (key) {
          field(fields[key]).value = key === "suite" ? params[key].replace(/\s+/g, "\n") : params[key];
        });
      });
    });
    return params;
  }

  function start() {
    var live = field("calculator");
    if (!live) {
      return;
    }
    readAddress();
    var forms = [["task-form", updateTask], ["suite-form", updateSuite], ["plan-form", updatePlan]];
    forms.forEach(function (pair) {
      var form = field(pair[0]);
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        pair[1](true);
      });
      form.addEventListener("input", function () {
        pair[1](true);
      });
      pair[1](false);
    });
    live.hidden = false;
  }

  window.reportgenCalculator = {
    normalQuantile: normalQuantile,
    tQuantile: tQuantile,
    tTwoSided: tTwoSided,
    estimateTask: estimateTask,
    estimateSuite: estimateSuite,
    plan: plan,
    parseSuite: parseSuite,
  };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
