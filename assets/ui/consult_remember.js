
(copy) => {
  try {
    if (copy === __NOTHING__) sessionStorage.removeItem(__KEY__);
    else if (copy) sessionStorage.setItem(__KEY__, copy);
  } catch (error) {}  // storage full or turned off: the page works on, a reload starts empty
}
